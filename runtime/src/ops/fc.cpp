// Adapters for fc_s8 / fc_s16 / fc_s8_w4 / fc_f32.
#include "check.h"
#include "mcuflow/kernels/kernels.h"

namespace mcuflow::ops {
namespace {

using format::DType;
using kernels::FcParams;

// Activations `act`, weights `weight`, bias `bias` (float32: all three float32).
Error check_fc(const OpCheck& c, DType act, DType weight, DType bias) {
  const auto& p = c.get_params<FcParams>();
  if (p.rows < 1 || !positive(p.in_c) || !positive(p.out_c) || !tensor_is(c, 0, act, uint64_t(p.rows) * p.in_c) ||
      !tensor_is(c, 1, weight, uint64_t(p.out_c) * p.in_c) || !tensor_is(c, 2, bias, p.out_c) ||
      !output_is(c, act, uint64_t(p.rows) * p.out_c))
    return Error::kBadParams;
  const uint64_t tables = p.per_channel ? uint64_t(p.out_c) : 1;
  return ok_if(act == DType::kFloat32 ||
               (in_range(p.per_channel, 0, 1) &&
                weighted_quantization_valid(c, act, p.input_offset, p.out, tables, uint64_t(p.out_c), uint64_t(p.in_c))));
}

}  // namespace

Error check_fc_s8(const OpCheck& c) { return check_fc(c, DType::kInt8, DType::kInt8, DType::kInt32); }
Error check_fc_f32(const OpCheck& c) { return check_fc(c, DType::kFloat32, DType::kFloat32, DType::kFloat32); }

Error check_fc_s16(const OpCheck& c) { return check_fc(c, DType::kInt16, DType::kInt8, DType::kInt64); }
Error check_fc_s8_w4(const OpCheck& c) { return check_fc(c, DType::kInt8, DType::kInt4, DType::kInt32); }

namespace {

void eval_fc_s8(const OpCall& c) {
  kernels::fc_s8(c.get_params<FcParams>(), c.in<int8_t>(0), c.in<int8_t>(1), c.in<int32_t>(2), c.in<int32_t>(3),
                 c.in<int32_t>(4), c.out<int8_t>(0));
}
void eval_fc_s16(const OpCall& c) {
  kernels::fc_s16(c.get_params<FcParams>(), c.in<int16_t>(0), c.in<int8_t>(1), c.in<int64_t>(2), c.in<int32_t>(3),
                  c.in<int32_t>(4), c.out<int16_t>(0));
}
void eval_fc_s8_w4(const OpCall& c) {
  kernels::fc_s8_w4(c.get_params<FcParams>(), c.in<int8_t>(0), c.in<uint8_t>(1), c.in<int32_t>(2), c.in<int32_t>(3),
                    c.in<int32_t>(4), c.out<int8_t>(0));
}
void eval_fc_f32(const OpCall& c) {
  kernels::fc_f32(c.get_params<FcParams>(), c.in<float>(0), c.in<float>(1), c.in<float>(2), c.out<float>(0));
}

}  // namespace

extern const KernelEntry kernel_entry_fc_s8 = {sizeof(FcParams), 5, 1, check_fc_s8, eval_fc_s8};
extern const KernelEntry kernel_entry_fc_s16 = {sizeof(FcParams), 5, 1, check_fc_s16, eval_fc_s16};
extern const KernelEntry kernel_entry_fc_s8_w4 = {sizeof(FcParams), 5, 1, check_fc_s8_w4, eval_fc_s8_w4};
extern const KernelEntry kernel_entry_fc_f32 = {sizeof(FcParams), 3, 1, check_fc_f32, eval_fc_f32};

}  // namespace mcuflow::ops
