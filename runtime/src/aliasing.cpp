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

namespace {

// The first input row (rows) or column of output row or column `o`'s window in the walk's
// order: raster order for the forward walk; for the backward walk both orders reversed (index
// extent - 1 - i), which turns its lead into the forward one (window_shift). -1: all taps in padding.
// Out of line: one copy serves rows and columns (flash).
__attribute__((noinline)) int32_t first_tap(const Window& w, bool rows, int32_t o, bool above) {
  const int32_t out = rows ? w.out_h : w.out_w, extent = rows ? w.in_h : w.in_w;
  const int32_t start = (above ? out - 1 - o : o) * (rows ? w.stride_h : w.stride_w) - (rows ? w.pad_top : w.pad_left);
  const int32_t i = tap(start, rows ? w.k_h : w.k_w, rows ? w.dil_h : w.dil_w, extent, above);
  return i < 0 || !above ? i : extent - 1 - i;
}

}  // namespace

// The forward lead, max over pixels q of (q + 1) * out_c - unread(q) * in_c with unread(q) the
// lowest first pixel of the windows from q on (at most in_h * in_w), in O(out_h + out_w) taps,
// not one per pixel: the window of (oy, ox) starts at row iy(oy), column ix(ox), so unread(q) =
// min(R, iy(oy) * in_w + C(ox)), R the lowest first pixel of the rows after oy's and C(ox) the
// lowest first column from ox on. A maximum of (q + 1) * out_c minus the larger of two terms
// splits in two: with R, largest at the row's last pixel; with C, oy * out_w * out_c - iy(oy) *
// in_w * in_c plus the column maximum X below, the same for every row. The backward walk is the
// forward one in reversed orders (first_tap): unread'(q') = in_h * in_w - unread(q) and q' =
// out_h * out_w - 1 - q give lead(q) = lead'(q') + in_h * in_w * in_c - out_h * out_w * out_c.
// 32-bit: every term is within kMaxWindowElements.
int64_t window_shift(const Window& w, uint32_t element_bytes, bool above) {
  if (int64_t(w.in_h) * w.in_w * w.in_c > kMaxWindowElements || int64_t(w.out_h) * w.out_w * w.out_c > kMaxWindowElements)
    return kNever;
  constexpr int32_t kNone = INT32_MIN;
  int32_t first_column = INT32_MAX, columns = kNone;  // C(0) and X = max over ox of (ox + 1) * out_c - C(ox) * in_c
  for (int32_t ox = w.out_w - 1; ox >= 0; --ox) {
    const int32_t ix = first_tap(w, false, ox, above);
    if (ix >= 0 && ix < first_column) first_column = ix;
    if (first_column == INT32_MAX) continue;  // no window from ox on touches the input
    const int32_t lead = (ox + 1) * w.out_c - first_column * w.in_c;
    if (lead > columns) columns = lead;
  }
  int32_t unread_after = w.in_h * w.in_w, lead = kNone;  // R
  for (int32_t oy = w.out_h - 1; oy >= 0; --oy) {
    const int32_t row = oy * w.out_w * w.out_c, with_rows = row + w.out_w * w.out_c - unread_after * w.in_c;
    if (with_rows > lead) lead = with_rows;
    const int32_t iy = first_tap(w, true, oy, above);
    if (iy < 0 || columns == kNone) continue;
    const int32_t with_columns = row - iy * w.in_w * w.in_c + columns;
    if (with_columns > lead) lead = with_columns;
    if (iy * w.in_w + first_column < unread_after) unread_after = iy * w.in_w + first_column;
  }
  if (lead == kNone) return 0;  // no output pixel
  if (above) lead += w.in_h * w.in_w * w.in_c - w.out_h * w.out_w * w.out_c;
  return lead > 0 ? int64_t(lead) * element_bytes : 0;
}

bool onto_source_shift(KernelId k, const void* params, int64_t* output_minus_input) {
  const bool cat_s8 = computes<KernelId::concat_slice_s8>(k), copy_b8 = computes<KernelId::strided_copy_b8>(k);
  // The kernel's unit, whatever the tensors' type (strided_copy_b8 moves int16 as byte pairs).
  const uint32_t element_bytes = cat_s8 || copy_b8 ? 1 : 4;
  if (cat_s8 || computes<KernelId::concat_slice_f32>(k)) {
    const auto& c = *static_cast<const kernels::ConcatSliceParams*>(params);
    *output_minus_input = -int64_t(c.offset_c) * element_bytes;
    return c.outer == 1;
  }
  if (!copy_b8 && !computes<KernelId::strided_copy_b32>(k)) return false;
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

bool placement_allowed(Contract c, KernelId kernel, const void* params, uint32_t in_element, bool same_dtype,
                       int64_t output_minus_input) {
  if (c.walk == Walk::kOntoSource) {
    int64_t shift = 0;
    return onto_source_shift(kernel, params, &shift) && output_minus_input == shift;
  }
  const bool above = output_minus_input > 0;
  if (!same_dtype || (above && c.walk != Walk::kBothWays)) return false;
  const int64_t shift = window_shift(window_of(c.geometry, params), in_element, above);
  return above ? output_minus_input >= shift : -output_minus_input >= shift;
}

}  // namespace mcuflow::aliasing
