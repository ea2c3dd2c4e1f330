// The window geometry of the aliasing contracts (aliasing.h), shared by the verifier and the
// planner.
#include "mcuflow/runtime/aliasing.h"

#include "mcuflow/kernels/params.h"

namespace mcuflow::aliasing {
namespace {

// The first (or last) input row or column inside the input that a window starting at `start`
// touches, or -1 when all its taps fall into padding.
int32_t first_tap(int32_t start, int32_t taps, int32_t dilation, int32_t extent) {
  for (int32_t t = 0; t < taps; ++t) {
    const int32_t i = start + t * dilation;
    if (i >= 0 && i < extent) return i;
  }
  return -1;
}
int32_t last_tap(int32_t start, int32_t taps, int32_t dilation, int32_t extent) {
  for (int32_t t = taps - 1; t >= 0; --t) {
    const int32_t i = start + t * dilation;
    if (i >= 0 && i < extent) return i;
  }
  return -1;
}

template <typename P>
Window conv_window(const P& c) {
  return {c.in_h, c.in_w, c.in_c, c.out_h, c.out_w, c.out_c, c.k_h, c.k_w,
          c.stride_h, c.stride_w, c.pad_top, c.pad_left, c.dil_h, c.dil_w};
}

}  // namespace

Window window_of(Geometry g, const void* params) {
  if (g == Geometry::kConv) return conv_window(*static_cast<const kernels::ConvParams*>(params));
  if (g == Geometry::kDwConv) return conv_window(*static_cast<const kernels::DwConvParams*>(params));
  const auto& c = *static_cast<const kernels::PoolParams*>(params);
  return {c.in_h, c.in_w, c.c, c.out_h, c.out_w, c.c, c.k_h, c.k_w, c.stride_h, c.stride_w, c.pad_top, c.pad_left, 1, 1};
}

// Pixel q = oy * out_w + ox; the loops count rows and columns (no 64-bit division on a device).
int64_t window_shift_below(const Window& w, int64_t element_bytes) {
  int64_t first_unread = int64_t(w.in_h) * w.in_w, shift = 0;
  for (int32_t oy = w.out_h - 1; oy >= 0; --oy) {
    const int32_t iy = first_tap(oy * w.stride_h - w.pad_top, w.k_h, w.dil_h, w.in_h);
    for (int32_t ox = w.out_w - 1; ox >= 0; --ox) {
      const int32_t ix = first_tap(ox * w.stride_w - w.pad_left, w.k_w, w.dil_w, w.in_w);
      if (iy >= 0 && ix >= 0 && int64_t(iy) * w.in_w + ix < first_unread) first_unread = int64_t(iy) * w.in_w + ix;
      const int64_t lead = (int64_t(oy) * w.out_w + ox + 1) * w.out_c - first_unread * w.in_c;
      if (lead > shift) shift = lead;
    }
  }
  return shift * element_bytes;
}

int64_t window_shift_above(const Window& w, int64_t element_bytes) {
  int64_t last_unread = 0, shift = 0;
  for (int32_t oy = 0; oy < w.out_h; ++oy) {
    const int32_t iy = last_tap(oy * w.stride_h - w.pad_top, w.k_h, w.dil_h, w.in_h);
    for (int32_t ox = 0; ox < w.out_w; ++ox) {
      const int32_t ix = last_tap(ox * w.stride_w - w.pad_left, w.k_w, w.dil_w, w.in_w);
      if (iy >= 0 && ix >= 0 && int64_t(iy) * w.in_w + ix + 1 > last_unread) last_unread = int64_t(iy) * w.in_w + ix + 1;
      const int64_t lead = last_unread * w.in_c - (int64_t(oy) * w.out_w + ox) * w.out_c;
      if (lead > shift) shift = lead;
    }
  }
  return shift * element_bytes;
}

bool onto_source_shift(KernelId k, const void* params, uint32_t element_bytes, int64_t* output_minus_input) {
  if (k == KernelId::concat_slice_s8 || k == KernelId::concat_slice_f32) {
    const auto& c = *static_cast<const kernels::ConcatSliceParams*>(params);
    *output_minus_input = -int64_t(c.offset_c) * element_bytes;
    return c.outer == 1;
  }
  if (k != KernelId::strided_copy_b8 && k != KernelId::strided_copy_b32) return false;
  // One block: the dims before the first partial one hold a single index, those after it are
  // whole; no stepping, no fill.
  const auto& c = *static_cast<const kernels::StridedCopyParams*>(params);
  bool block = true, partial = false;
  int64_t stride = element_bytes, offset = 0;
  for (int d = 3; d >= 0; --d) {
    block = block && c.num[d] == 1 && c.den[d] == 1 && c.start[d] >= 0 && c.start[d] + c.out_dims[d] <= c.in_dims[d] &&
            (!partial || c.out_dims[d] == 1);
    partial = partial || c.out_dims[d] != c.in_dims[d];
    offset += int64_t(c.start[d]) * stride;
    stride *= c.in_dims[d];
  }
  *output_minus_input = offset;
  return block;
}

}  // namespace mcuflow::aliasing
