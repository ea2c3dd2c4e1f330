// What the int16 kernels share (A16W8, docs/quantization.md "int16 activations"): symmetric
// int16 activations, int8 weights, int64 biases and accumulators.
#pragma once
#include <cstdint>

#include "mcuflow/kernels/arith.h"
#include "mcuflow/kernels/params.h"

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

}  // namespace mcuflow::kernels::detail
