// Adapters for prelu_s8 / prelu_f32: one slope per channel of [outer][channels][inner].
#include "check.h"
#include "mcuflow/kernels/kernels.h"

namespace mcuflow::ops {
namespace {

using format::DType;
using kernels::PreluParams;

Error check_prelu(const OpCheck& c, DType dtype) {
  const auto& p = c.get_params<PreluParams>();
  if (!positive(p.outer) || !positive(p.channels) || !positive(p.inner)) return Error::kBadParams;
  const uint64_t n = uint64_t(p.outer) * uint64_t(p.channels) * uint64_t(p.inner);
  if (!tensor_is(c, 0, dtype, n) || !tensor_is(c, 1, dtype, uint64_t(p.channels)) || !output_is(c, dtype, n))
    return Error::kBadParams;
  return ok_if(dtype == DType::kFloat32 ||
               (zero_point_offsets(p.input_offset, p.output_offset) &&
                requantization_valid(p.positive_multiplier, p.positive_shift) &&
                requantization_valid(p.negative_multiplier, p.negative_shift) &&
                int8_activation_range(p.act_min, p.act_max)));
}

Error check_prelu_s8(const OpCheck& c) { return check_prelu(c, DType::kInt8); }
Error check_prelu_f32(const OpCheck& c) { return check_prelu(c, DType::kFloat32); }

void eval_prelu_s8(const OpCall& c) {
  kernels::prelu_s8(c.get_params<PreluParams>(), c.in<int8_t>(0), c.in<int8_t>(1), c.out<int8_t>(0));
}
void eval_prelu_f32(const OpCall& c) {
  kernels::prelu_f32(c.get_params<PreluParams>(), c.in<float>(0), c.in<float>(1), c.out<float>(0));
}

}  // namespace

extern const KernelEntry kernel_entry_prelu_s8 = {sizeof(PreluParams), 2, 1, check_prelu_s8, eval_prelu_s8};
extern const KernelEntry kernel_entry_prelu_f32 = {sizeof(PreluParams), 2, 1, check_prelu_f32, eval_prelu_f32};

}  // namespace mcuflow::ops
