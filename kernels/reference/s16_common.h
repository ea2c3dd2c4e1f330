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
void weighted_window_s16(const WindowParams& p, const int16_t* input, const int64_t* bias, const int32_t* multipliers,
                         const int32_t* shifts, int16_t* output, Tap tap) {
  weighted_window<int64_t>(p, input, output, tap, [&](int64_t acc, int32_t oc) {
    return output_stage_s16(acc + (bias ? bias[oc] : 0), multipliers[oc], shifts[oc], p.out);
  });
}

}  // namespace mcuflow::kernels::detail
