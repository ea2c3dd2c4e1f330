// What the packed int4 weight kernels share (W4A8, docs/quantization.md "int4 weights"): int8
// activations as the int8 kernels take them, weights two a byte (mcuflow/kernels/int4_weights.h),
// the int8 kernels' int32 bias and output stage.
#pragma once
#include <cstdint>

#include "mcuflow/kernels/arith.h"
#include "mcuflow/kernels/int4_weights.h"
#include "mcuflow/kernels/params.h"

namespace mcuflow::kernels::detail {

using kernels::weight_s4;

// sum over i < n of (a[i] + a_offset) * weight i0 + i: dot_s8 (window.h) on packed weights. A run
// may start at an odd element (a row of an odd count), so each weight is located by its index.
inline int32_t dot_s8_w4(const int8_t* a, const uint8_t* packed, int32_t i0, int32_t n, int32_t a_offset) {
  int32_t acc = 0;
  for (int32_t i = 0; i < n; ++i) acc += (a[i] + a_offset) * weight_s4(packed, i0 + i);
  return acc;
}

// The int8 kernels' output stage: bias, requantization, output offset, clamp.
inline int8_t output_stage_s8(int32_t acc, const int32_t* bias, int32_t channel, int32_t multiplier, int32_t shift,
                              const OutputStage& o) {
  if (bias) acc += bias[channel];
  acc = multiply_by_quantized_multiplier(acc, multiplier, shift) + o.output_offset;
  return static_cast<int8_t>(clamp_i32(acc, o.act_min, o.act_max));
}

}  // namespace mcuflow::kernels::detail
