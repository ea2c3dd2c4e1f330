// Building blocks of the int8 window and matrix kernels, written so that an optimizing host
// compiler vectorizes them while the arithmetic stays exactly the reference's (integer sums
// are the same in any order; the verifier bounds them to fit int32).
#pragma once
#include <cstdint>

#include "raster_order.h"

namespace mcuflow::kernels::detail {

// The taps k in [begin, end) of a window whose input coordinate origin + k * dilation lies in
// [0, size): padding taps contribute nothing, so loops visit only these and test nothing per tap.
struct TapRange {
  int32_t begin, end;
};

inline TapRange valid_taps(int32_t origin, int32_t taps, int32_t dilation, int32_t size) {
  const int32_t begin = origin < 0 ? (dilation - 1 - origin) / dilation : 0;  // ceil(-origin / dilation)
  int32_t end = origin < size ? (size - 1 - origin) / dilation + 1 : 0;
  if (end > taps) end = taps;
  return {begin, end > begin ? end : begin};
}

// The output walk of a weighted window kernel that reads its taps one by one (conv, depthwise conv
// of int16 activations or int4 weights), NHWC: for each output pixel and channel oc, output pixel
// channel oc = finish(sum of tap(input pixel, ky, kx, oc) over the taps inside the input, oc) with
// the sum in Acc. Padding taps add nothing (their values are the zero point: offset value 0).
// Pixels in raster order, backwards when the output starts above `input` (raster_order.h).
template <typename Acc, typename WindowParams, typename In, typename Out, typename Tap, typename Finish>
void weighted_window(const WindowParams& p, const In* input, Out* output, Tap tap, Finish finish) {
  for_each_output_pixel(p.out_h, p.out_w, input, output, [&](int32_t oy, int32_t ox) {
    const int32_t iy0 = oy * p.stride_h - p.pad_top, ix0 = ox * p.stride_w - p.pad_left;
    const TapRange rows = valid_taps(iy0, p.k_h, p.dil_h, p.in_h), cols = valid_taps(ix0, p.k_w, p.dil_w, p.in_w);
    Out* out = output + (oy * p.out_w + ox) * p.out_c;
    for (int32_t oc = 0; oc < p.out_c; ++oc) {
      Acc acc = 0;
      for (int32_t ky = rows.begin; ky < rows.end; ++ky) {
        for (int32_t kx = cols.begin; kx < cols.end; ++kx)
          acc += tap((iy0 + ky * p.dil_h) * p.in_w + ix0 + kx * p.dil_w, ky, kx, oc);
      }
      out[oc] = finish(acc, oc);
    }
  });
}

// The valid taps of one output pixel's window of an ungrouped conv (window origin iy0, ix0; taps
// rows x cols) as runs in the reference's order: run(input, at, n) for n inputs from `input`,
// which meet weights [at, at + n) of each OHWI row. Without horizontal dilation a window row's
// valid taps are adjacent in the input and the weights: one run per row, else one per tap.
template <typename Params, typename In, typename Run>
inline void for_each_window_run(const Params& p, In* input, int32_t iy0, int32_t ix0, TapRange rows, TapRange cols,
                                Run run) {
  for (int32_t ky = rows.begin; ky < rows.end; ++ky) {
    In* in_row = input + ((iy0 + ky * p.dil_h) * p.in_w + ix0) * p.in_c;
    if (p.dil_w == 1) {
      run(in_row + cols.begin * p.in_c, (ky * p.k_w + cols.begin) * p.in_c, (cols.end - cols.begin) * p.in_c);
      continue;
    }
    for (int32_t kx = cols.begin; kx < cols.end; ++kx)
      run(in_row + kx * p.dil_w * p.in_c, (ky * p.k_w + kx) * p.in_c, p.in_c);
  }
}

// sum over i < n of (a[i] + a_offset) * b[i]. a_offset is a negated int8 zero point (the
// verifier keeps it in [-127, 128]), so both factors fit int16: written on int16 operands the
// loop becomes 16-bit multiply-adds on hosts with SIMD.
inline int32_t dot_s8(const int8_t* a, const int8_t* b, int32_t n, int32_t a_offset) {
  const int16_t offset = static_cast<int16_t>(a_offset);
  int32_t acc = 0;
  for (int32_t i = 0; i < n; ++i) acc += static_cast<int16_t>(a[i] + offset) * static_cast<int16_t>(b[i]);
  return acc;
}

// sum over i < n of a[i] * b[i]: dot_s8 with the first operand already offset and widened, for
// data that many dot products share.
inline int32_t dot_s16_s8(const int16_t* a, const int8_t* b, int32_t n) {
  int32_t acc = 0;
  for (int32_t i = 0; i < n; ++i) acc += a[i] * static_cast<int16_t>(b[i]);
  return acc;
}

}  // namespace mcuflow::kernels::detail
