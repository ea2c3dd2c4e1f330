// The window geometry of the aliasing contracts (aliasing.h), shared by the verifier and the
// planner.
#include "mcuflow/runtime/aliasing.h"

#include "mcuflow/kernels/params.h"

namespace mcuflow::aliasing {
namespace {

// The first (or, `last`, the last) input row or column inside the input that a window starting
// at `start` touches, or -1 when all its taps fall into padding. Out of line: one copy serves
// rows and columns (flash).
__attribute__((noinline)) int32_t tap(int32_t start, int32_t taps, int32_t dilation, int32_t extent, bool last) {
  for (int32_t t = 0; t < taps; ++t) {
    const int32_t i = start + (last ? taps - 1 - t : t) * dilation;
    if (i >= 0 && i < extent) return i;
  }
  return -1;
}

// One function for both walks (flash on a device): the forward lead visits the pixels from the
// last, tracking the lowest first pixel of the windows still to come; the backward lead visits
// them from the first, tracking the highest end of the windows already seen. 32-bit: the
// windows are at most kMaxWindowElements.
int64_t window_shift(const Window& w, int64_t element_bytes, bool backwards) {
  if (int64_t(w.in_h) * w.in_w * w.in_c > kMaxWindowElements || int64_t(w.out_h) * w.out_w * w.out_c > kMaxWindowElements)
    return kNever;
  int32_t unread = backwards ? 0 : w.in_h * w.in_w, shift = 0;
  for (int32_t k = 0; k < w.out_h * w.out_w; ++k) {
    const int32_t q = backwards ? k : w.out_h * w.out_w - 1 - k, oy = q / w.out_w, ox = q % w.out_w;
    const int32_t iy = tap(oy * w.stride_h - w.pad_top, w.k_h, w.dil_h, w.in_h, backwards);
    const int32_t ix = tap(ox * w.stride_w - w.pad_left, w.k_w, w.dil_w, w.in_w, backwards);
    if (iy >= 0 && ix >= 0) {
      const int32_t pixel = iy * w.in_w + ix;
      if (backwards ? pixel + 1 > unread : pixel < unread) unread = backwards ? pixel + 1 : pixel;
    }
    const int32_t lead = backwards ? unread * w.in_c - q * w.out_c : (q + 1) * w.out_c - unread * w.in_c;
    if (lead > shift) shift = lead;
  }
  return shift * element_bytes;
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

int64_t window_shift_below(const Window& w, int64_t element_bytes) { return window_shift(w, element_bytes, false); }

int64_t window_shift_above(const Window& w, int64_t element_bytes) { return window_shift(w, element_bytes, true); }

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
  for (int d = int(kernels::kMaxRank) - 1; d >= 0; --d) {
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
