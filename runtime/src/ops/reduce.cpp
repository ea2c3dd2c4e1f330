// Adapters for reduce_s8 / reduce_f32 (sum, mean, max over one axis) and argmax_s8 / argmax_f32.
#include "check.h"
#include "mcuflow/kernels/kernels.h"
#include "mcuflow/kernels/tier_contract.h"

namespace mcuflow::ops {
namespace {

using format::DType;
using kernels::ArgmaxParams;
using kernels::ReduceParams;

// The int8 sum of `reduce` offset values (magnitude <= 255) must fit int32.
constexpr int32_t kMaxReduce = 1 << 23;

bool axes_valid(int32_t outer, int32_t reduce, int32_t inner) {
  return positive(outer) && in_range(reduce, 1, kMaxReduce) && positive(inner);
}

Error check_reduce(const OpCheck& c, DType dtype) {
  const auto& p = c.get_params<ReduceParams>();
  if (!axes_valid(p.outer, p.reduce, p.inner) || !in_range(p.op, kernels::kReduceSum, kernels::kReduceMax))
    return Error::kBadParams;
  const uint64_t out = uint64_t(p.outer) * p.inner;
  if (!tensor_is(c, 0, dtype, out * uint64_t(p.reduce)) || !output_is(c, dtype, out)) return Error::kBadParams;
  return ok_if(dtype == DType::kFloat32 ||
               (zero_point_offsets(p.input_offset, p.output_offset) && p.multiplier >= 0 &&
                in_range(p.shift, -31, 30) && int8_activation_range(p.act_min, p.act_max)));
}

Error check_argmax(const OpCheck& c, DType dtype) {
  const auto& p = c.get_params<ArgmaxParams>();
  if (!axes_valid(p.outer, p.reduce, p.inner)) return Error::kBadParams;
  const uint64_t out = uint64_t(p.outer) * p.inner;
  return ok_if(tensor_is(c, 0, dtype, out * uint64_t(p.reduce)) && output_is(c, DType::kInt32, out));
}

Error check_reduce_f32(const OpCheck& c) { return check_reduce(c, DType::kFloat32); }
Error check_argmax_s8(const OpCheck& c) { return check_argmax(c, DType::kInt8); }
Error check_argmax_f32(const OpCheck& c) { return check_argmax(c, DType::kFloat32); }

void eval_reduce_s8(const OpCall& c) {
  kernels::reduce_s8(c.get_params<ReduceParams>(), c.in<int8_t>(0), c.out<int8_t>(0));
}
void eval_reduce_f32(const OpCall& c) {
  kernels::reduce_f32(c.get_params<ReduceParams>(), c.in<float>(0), c.out<float>(0));
}
void eval_argmax_s8(const OpCall& c) {
  kernels::argmax_s8(c.get_params<ArgmaxParams>(), c.in<int8_t>(0), c.out<int32_t>(0));
}
void eval_argmax_f32(const OpCall& c) {
  kernels::argmax_f32(c.get_params<ArgmaxParams>(), c.in<float>(0), c.out<int32_t>(0));
}

}  // namespace

Error check_reduce_s8(const OpCheck& c) { return check_reduce(c, DType::kInt8); }

// Here, not beside the tier adapters: a firmware builds only the tiers its kernels name, and the
// check serves reduce_s8_scalar, reduce_s8_dsp and reduce_s8_mve alike.
Error check_reduce_sum_s8(const OpCheck& c) {
  if (const Error e = check_reduce_s8(c); e != Error::kOk) return e;
  return ok_if(kernels::reduce_sum_refusal(c.get_params<ReduceParams>()) == kernels::Refusal::kNone);
}

extern const KernelEntry kernel_entry_reduce_s8 = {sizeof(ReduceParams), 1, 1, check_reduce_s8, eval_reduce_s8};
extern const KernelEntry kernel_entry_reduce_f32 = {sizeof(ReduceParams), 1, 1, check_reduce_f32, eval_reduce_f32};
extern const KernelEntry kernel_entry_argmax_s8 = {sizeof(ArgmaxParams), 1, 1, check_argmax_s8, eval_argmax_s8};
extern const KernelEntry kernel_entry_argmax_f32 = {sizeof(ArgmaxParams), 1, 1, check_argmax_f32, eval_argmax_f32};

}  // namespace mcuflow::ops
