// Adapters for concat_slice_s8 / concat_slice_f32.
#include "check.h"
#include "mcuflow/kernels/kernels.h"

namespace mcuflow::ops {
namespace {

using format::DType;
using kernels::ConcatSliceParams;

Error check_concat(const OpCheck& c, DType dtype) {
  const auto& p = c.get_params<ConcatSliceParams>();
  if (p.outer < 1 || p.in_c < 1 || p.out_c < 1 || p.offset_c < 0 || int64_t(p.offset_c) + p.in_c > p.out_c)
    return Error::kBadParams;
  if (!tensor_is(c, 0, dtype, uint64_t(p.outer) * p.in_c) || !output_is(c, dtype, uint64_t(p.outer) * p.out_c))
    return Error::kBadParams;
  if (dtype == DType::kFloat32) return ok_if(p.requantize == 0);
  return ok_if(in_range(p.requantize, 0, 1) && zero_point_offsets(p.input_offset, p.output_offset) &&
               p.multiplier >= 0 && in_range(p.shift, -31, 30));
}

Error check_f32(const OpCheck& c) { return check_concat(c, DType::kFloat32); }

}  // namespace

Error check_concat_slice_s8(const OpCheck& c) { return check_concat(c, DType::kInt8); }

namespace {

void eval_s8(const OpCall& c) {
  kernels::concat_slice_s8(c.get_params<ConcatSliceParams>(), c.in<int8_t>(0), c.out<int8_t>(0));
}
void eval_f32(const OpCall& c) {
  kernels::concat_slice_f32(c.get_params<ConcatSliceParams>(), c.in<float>(0), c.out<float>(0));
}

}  // namespace

// Access order: the planner lays a one-row slice inside the tensor it is copied into, at the
// place it is copied to: each element then lands where it is read from.
extern const KernelEntry kernel_entry_concat_slice_s8 = {sizeof(ConcatSliceParams), 1, 1, check_concat_slice_s8, eval_s8,
                                                         aliasing::kOntoSource};
extern const KernelEntry kernel_entry_concat_slice_f32 = {sizeof(ConcatSliceParams), 1, 1, check_f32, eval_f32,
                                                          aliasing::kOntoSource};

}  // namespace mcuflow::ops
