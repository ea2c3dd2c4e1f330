// The window geometry of the aliasing contracts (aliasing.h), shared by the verifier and the
// planner.
#include "mcuflow/runtime/aliasing.h"

#include <cstddef>
#include <cstring>

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

// Where each Window field lies in a geometry's params, in words (kOne: the field is 1), so one
// loop fills a Window from any of them (flash).
constexpr uint8_t kOne = 0xFF;
#define MCUFLOW_WORD(P, field) uint8_t(offsetof(kernels::P, field) / 4)
#define MCUFLOW_WINDOW_WORDS(P, in_c, out_c, dil_h, dil_w)                                                        \
  {MCUFLOW_WORD(P, in_h),     MCUFLOW_WORD(P, in_w),    in_c,                   MCUFLOW_WORD(P, out_h),         \
   MCUFLOW_WORD(P, out_w),    out_c,                    MCUFLOW_WORD(P, k_h),   MCUFLOW_WORD(P, k_w),           \
   MCUFLOW_WORD(P, stride_h), MCUFLOW_WORD(P, stride_w), MCUFLOW_WORD(P, pad_top), MCUFLOW_WORD(P, pad_left),    \
   dil_h,                     dil_w}
constexpr uint8_t kWindowWords[3][14] = {
    MCUFLOW_WINDOW_WORDS(ConvParams, MCUFLOW_WORD(ConvParams, in_c), MCUFLOW_WORD(ConvParams, out_c),
                         MCUFLOW_WORD(ConvParams, dil_h), MCUFLOW_WORD(ConvParams, dil_w)),
    MCUFLOW_WINDOW_WORDS(DwConvParams, MCUFLOW_WORD(DwConvParams, in_c), MCUFLOW_WORD(DwConvParams, out_c),
                         MCUFLOW_WORD(DwConvParams, dil_h), MCUFLOW_WORD(DwConvParams, dil_w)),
    MCUFLOW_WINDOW_WORDS(PoolParams, MCUFLOW_WORD(PoolParams, c), MCUFLOW_WORD(PoolParams, c), kOne, kOne),
};
#undef MCUFLOW_WINDOW_WORDS
#undef MCUFLOW_WORD
static_assert(sizeof(Window) == sizeof(kWindowWords[0]) * 4, "a Window is its 14 words");

}  // namespace

Window window_of(Geometry g, const void* params) {
  const uint8_t* words = kWindowWords[uint8_t(g) - uint8_t(Geometry::kConv)];
  Window w;
  for (uint32_t i = 0; i < sizeof(kWindowWords[0]); ++i) {
    const int32_t one = 1;
    const void* field = words[i] == kOne ? &one : static_cast<const int32_t*>(params) + words[i];
    std::memcpy(reinterpret_cast<uint8_t*>(&w) + 4 * i, field, 4);
  }
  return w;
}

// One function for both walks (flash on a device): below, the forward lead visits the pixels from
// the last, tracking the lowest first pixel of the windows still to come; above, the backward
// lead visits them from the first, tracking the highest end of the windows already seen. 32-bit:
// the windows are at most kMaxWindowElements.
int64_t window_shift(const Window& w, uint32_t element_bytes, bool above) {
  if (int64_t(w.in_h) * w.in_w * w.in_c > kMaxWindowElements || int64_t(w.out_h) * w.out_w * w.out_c > kMaxWindowElements)
    return kNever;
  int32_t unread = above ? 0 : w.in_h * w.in_w, shift = 0;
  for (int32_t k = 0; k < w.out_h * w.out_w; ++k) {
    const int32_t q = above ? k : w.out_h * w.out_w - 1 - k, oy = q / w.out_w, ox = q % w.out_w;
    const int32_t iy = tap(oy * w.stride_h - w.pad_top, w.k_h, w.dil_h, w.in_h, above);
    const int32_t ix = tap(ox * w.stride_w - w.pad_left, w.k_w, w.dil_w, w.in_w, above);
    if (iy >= 0 && ix >= 0) {
      const int32_t pixel = iy * w.in_w + ix;
      if (above ? pixel + 1 > unread : pixel < unread) unread = above ? pixel + 1 : pixel;
    }
    const int32_t lead = above ? unread * w.in_c - q * w.out_c : (q + 1) * w.out_c - unread * w.in_c;
    if (lead > shift) shift = lead;
  }
  return int64_t(shift) * element_bytes;
}

bool onto_source_shift(KernelId k, const void* params, int64_t* output_minus_input) {
  // The kernel's unit, whatever the tensors' type (strided_copy_b8 moves int16 as byte pairs).
  const uint32_t element_bytes = k == KernelId::concat_slice_s8 || k == KernelId::strided_copy_b8 ? 1 : 4;
  if (k == KernelId::concat_slice_s8 || k == KernelId::concat_slice_f32) {
    const auto& c = *static_cast<const kernels::ConcatSliceParams*>(params);
    *output_minus_input = -int64_t(c.offset_c) * element_bytes;
    return c.outer == 1;
  }
  if (k != KernelId::strided_copy_b8 && k != KernelId::strided_copy_b32) return false;
  // One block: the dims before the first partial one hold a single index, those after it are
  // whole; no stepping, no fill.
  const auto& c = *static_cast<const kernels::StridedCopyParams*>(params);
  bool partial = false;
  int64_t stride = element_bytes, offset = 0;
  for (int d = int(kernels::kMaxRank) - 1; d >= 0; --d) {
    if (c.num[d] != 1 || c.den[d] != 1 || c.start[d] < 0 || c.start[d] + c.out_dims[d] > c.in_dims[d] ||
        (partial && c.out_dims[d] != 1))
      return false;
    partial = partial || c.out_dims[d] != c.in_dims[d];
    offset += int64_t(c.start[d]) * stride;
    stride *= c.in_dims[d];
  }
  *output_minus_input = offset;
  return true;
}

}  // namespace mcuflow::aliasing
