// Adapters for the mask kernels: compare_s8 / compare_f32 (a mask out) and where_s8 /
// where_f32 (a mask in). Masks are int8 tensors of 0s and 1s.
#include "check.h"
#include "mcuflow/kernels/kernels.h"

namespace mcuflow::ops {
namespace {

using format::DType;
using kernels::CompareParams;
using kernels::WhereParams;

Error check_compare(const OpCheck& c, DType dtype) {
  const auto& p = c.get_params<CompareParams>();
  if (!positive(p.outer) || !positive(p.inner) || !in_range(p.in2_mode, 0, 2) ||
      !in_range(p.op, kernels::kCompareEq, kernels::kCompareGe))
    return Error::kBadParams;
  const uint64_t n = uint64_t(p.outer) * uint64_t(p.inner);
  const uint64_t n2 = p.in2_mode == 0 ? n : p.in2_mode == 1 ? uint64_t(p.inner) : 1;
  if (!tensor_is(c, 0, dtype, n) || !tensor_is(c, 1, dtype, n2) || !output_is(c, DType::kInt8, n))
    return Error::kBadParams;
  return ok_if(dtype == DType::kFloat32 ||
               (input_offset_valid(p.input1_offset) && input_offset_valid(p.input2_offset) &&
                in_range(p.input1_multiplier, 1, kernels::kCompareMaxMultiplier) &&
                in_range(p.input2_multiplier, 1, kernels::kCompareMaxMultiplier) &&
                in_range(p.input1_shift, 0, kernels::kCompareMaxShift) &&
                in_range(p.input2_shift, 0, kernels::kCompareMaxShift)));
}

Error check_compare_s8(const OpCheck& c) { return check_compare(c, DType::kInt8); }
Error check_compare_f32(const OpCheck& c) { return check_compare(c, DType::kFloat32); }

// Each input holds `count` values, or one when its *_single flag is set.
bool where_input_is(const OpCheck& c, uint32_t slot, DType dtype, int32_t single, int32_t count) {
  return in_range(single, 0, 1) && tensor_is(c, slot, dtype, single ? 1 : uint64_t(count));
}

Error check_where(const OpCheck& c, DType dtype) {
  const auto& p = c.get_params<WhereParams>();
  if (!positive(p.count) || !where_input_is(c, 0, DType::kInt8, p.mask_single, p.count) ||
      !where_input_is(c, 1, dtype, p.a_single, p.count) || !where_input_is(c, 2, dtype, p.b_single, p.count) ||
      !output_is(c, dtype, uint64_t(p.count)))
    return Error::kBadParams;
  return ok_if(dtype == DType::kFloat32 ||
               (input_offset_valid(p.a_offset) && input_offset_valid(p.b_offset) &&
                requantization_valid(p.a_multiplier, p.a_shift) && requantization_valid(p.b_multiplier, p.b_shift) &&
                in_range(p.output_offset, -128, 127)));
}

Error check_where_s8(const OpCheck& c) { return check_where(c, DType::kInt8); }
Error check_where_f32(const OpCheck& c) { return check_where(c, DType::kFloat32); }

void eval_compare_s8(const OpCall& c) {
  kernels::compare_s8(c.get_params<CompareParams>(), c.in<int8_t>(0), c.in<int8_t>(1), c.out<int8_t>(0));
}
void eval_compare_f32(const OpCall& c) {
  kernels::compare_f32(c.get_params<CompareParams>(), c.in<float>(0), c.in<float>(1), c.out<int8_t>(0));
}
void eval_where_s8(const OpCall& c) {
  kernels::where_s8(c.get_params<WhereParams>(), c.in<int8_t>(0), c.in<int8_t>(1), c.in<int8_t>(2), c.out<int8_t>(0));
}
void eval_where_f32(const OpCall& c) {
  kernels::where_f32(c.get_params<WhereParams>(), c.in<int8_t>(0), c.in<float>(1), c.in<float>(2), c.out<float>(0));
}

}  // namespace

extern const KernelEntry kernel_entry_compare_s8 = {sizeof(CompareParams), 2, 1, check_compare_s8, eval_compare_s8};
extern const KernelEntry kernel_entry_compare_f32 = {sizeof(CompareParams), 2, 1, check_compare_f32, eval_compare_f32};
extern const KernelEntry kernel_entry_where_s8 = {sizeof(WhereParams), 3, 1, check_where_s8, eval_where_s8};
extern const KernelEntry kernel_entry_where_f32 = {sizeof(WhereParams), 3, 1, check_where_f32, eval_where_f32};

}  // namespace mcuflow::ops
