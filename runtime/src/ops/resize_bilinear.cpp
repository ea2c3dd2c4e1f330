// Adapters for resize_bilinear_s8 / resize_bilinear_f32: the compiler's source indices must lie
// inside the input (so no read leaves it) and the int8 weights inside [0, 2^kResizeWeightBits]
// (so the weighted sum fits int32).
#include "check.h"
#include "mcuflow/kernels/kernels.h"

namespace mcuflow::ops {
namespace {

using format::DType;
using kernels::ResizeBilinearParams;

// The constant at `slot`: `count` elements of T, every one inside [lo, hi(i)].
template <typename T, typename Hi>
bool constant_within(const OpCheck& c, uint32_t slot, DType dtype, int32_t count, T lo, Hi hi) {
  const format::TensorRecord& t = c.tensor(slot);
  if (!tensor_is(c, slot, dtype, uint64_t(count)) || !read_only(t) || t.offset % sizeof(T) != 0) return false;
  const T* values = reinterpret_cast<const T*>(c.constants + t.offset);
  for (int32_t i = 0; i < count; ++i) {
    if (!(values[i] >= lo && values[i] <= hi(i))) return false;
  }
  return true;
}

Error check_resize(const OpCheck& c, DType dtype) {
  const auto& p = c.get_params<ResizeBilinearParams>();
  if (!positive(p.in_h) || !positive(p.in_w) || !positive(p.channels) || !positive(p.out_h) || !positive(p.out_w))
    return Error::kBadParams;
  const uint64_t in = uint64_t(p.in_h) * uint64_t(p.in_w) * uint64_t(p.channels);
  const uint64_t out = uint64_t(p.out_h) * uint64_t(p.out_w) * uint64_t(p.channels);
  if (!tensor_is(c, 0, dtype, in) || !output_is(c, dtype, out)) return Error::kBadParams;
  const int32_t entries = p.out_h + p.out_w;
  const bool taps_inside = constant_within<int32_t>(c, 1, DType::kInt32, 2 * entries, 0, [&](int32_t i) {
    return (i < 2 * p.out_h ? p.in_h : p.in_w) - 1;
  });
  if (!taps_inside) return Error::kBadParams;
  if (dtype == DType::kFloat32) return ok_if(tensor_is(c, 2, DType::kFloat32, uint64_t(entries)));
  return ok_if(constant_within<int32_t>(c, 2, DType::kInt32, entries, 0,
                                        [](int32_t) { return int32_t{1} << kernels::kResizeWeightBits; }));
}

Error check_resize_bilinear_s8(const OpCheck& c) { return check_resize(c, DType::kInt8); }
Error check_resize_bilinear_f32(const OpCheck& c) { return check_resize(c, DType::kFloat32); }

void eval_resize_bilinear_s8(const OpCall& c) {
  kernels::resize_bilinear_s8(c.get_params<ResizeBilinearParams>(), c.in<int8_t>(0), c.in<int32_t>(1),
                              c.in<int32_t>(2), c.out<int8_t>(0));
}
void eval_resize_bilinear_f32(const OpCall& c) {
  kernels::resize_bilinear_f32(c.get_params<ResizeBilinearParams>(), c.in<float>(0), c.in<int32_t>(1),
                               c.in<float>(2), c.out<float>(0));
}

}  // namespace

extern const KernelEntry kernel_entry_resize_bilinear_s8 = {sizeof(ResizeBilinearParams), 3, 1,
                                                            check_resize_bilinear_s8, eval_resize_bilinear_s8};
extern const KernelEntry kernel_entry_resize_bilinear_f32 = {sizeof(ResizeBilinearParams), 3, 1,
                                                             check_resize_bilinear_f32, eval_resize_bilinear_f32};

}  // namespace mcuflow::ops
