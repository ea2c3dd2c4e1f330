// What the int16 kernels share (A16W8, docs/quantization.md "int16 activations"): symmetric
// int16 activations, int8 weights, int64 biases and accumulators.
#pragma once
#include <cstdint>

#include "mcuflow/kernels/arith.h"
#include "mcuflow/kernels/params.h"
#include "window.h"

namespace mcuflow::kernels::detail {

inline int16_t clamp_to_s16(int64_t v, int32_t lo, int32_t hi) {
  return static_cast<int16_t>(v < lo ? lo : (v > hi ? hi : v));
}

// The output stage of a weighted int16 kernel: the accumulator requantized, offset, clamped.
inline int16_t output_stage_s16(int64_t acc, int32_t multiplier, int32_t shift, const OutputStage& o) {
  return clamp_to_s16(multiply_by_quantized_multiplier_wide(acc, multiplier, shift) + o.output_offset, o.act_min,
                      o.act_max);
}

inline int64_t dot_s16_s8_wide(const int16_t* a, const int8_t* b, int32_t n) {
  int64_t acc = 0;
  for (int32_t i = 0; i < n; ++i) acc += int32_t(a[i]) * b[i];
  return acc;
}

// The output walk of a weighted int16 window kernel (conv, depthwise conv), NHWC: for each output
// pixel and channel oc, the bias plus tap(pixel, ky, kx, oc) over the taps inside the input (the
// input zero point is 0, so padding taps add nothing), through the output stage.
template <typename WindowParams, typename Tap>
void weighted_window_s16(const WindowParams& p, const int64_t* bias, const int32_t* multipliers,
                         const int32_t* shifts, int16_t* output, Tap tap) {
  for (int32_t oy = 0; oy < p.out_h; ++oy) {
    const int32_t iy0 = oy * p.stride_h - p.pad_top;
    const TapRange rows = valid_taps(iy0, p.k_h, p.dil_h, p.in_h);
    for (int32_t ox = 0; ox < p.out_w; ++ox) {
      const int32_t ix0 = ox * p.stride_w - p.pad_left;
      const TapRange cols = valid_taps(ix0, p.k_w, p.dil_w, p.in_w);
      for (int32_t oc = 0; oc < p.out_c; ++oc) {
        int64_t acc = bias ? bias[oc] : 0;
        for (int32_t ky = rows.begin; ky < rows.end; ++ky) {
          for (int32_t kx = cols.begin; kx < cols.end; ++kx)
            acc += tap((iy0 + ky * p.dil_h) * p.in_w + ix0 + kx * p.dil_w, ky, kx, oc);
        }
        *output++ = output_stage_s16(acc, multipliers[oc], shifts[oc], p.out);
      }
    }
  }
}

}  // namespace mcuflow::kernels::detail
