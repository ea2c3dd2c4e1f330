// The conversions between float32 and the quantized types and between two quantizations
// (quantize, dequantize, requantize), one definition for int8 and int16 elements.
#pragma once
#include <cmath>
#include <cstdint>
#include <limits>

#include "mcuflow/kernels/arith.h"
#include "mcuflow/kernels/params.h"

namespace mcuflow::kernels::detail {

// q = clamp(round_half_away(x / scale) + zero_point) to T's range, in float32 like TFLite's
// quantize (a true division, not a multiply by 1/scale).
template <typename T>
void quantize_from_f32(const QuantizeParams& p, const float* input, T* output) {
  constexpr float kLo = std::numeric_limits<T>::min(), kHi = std::numeric_limits<T>::max();
  const float zp = static_cast<float>(p.zero_point);
  for (int32_t i = 0; i < p.n; ++i) {
    // Adding the zero point in float is exact wherever the result is not clamped anyway;
    // clamping before the conversion keeps it defined for huge inputs (NaN maps to the minimum).
    float v = std::round(input[i] / p.scale) + zp;
    v = !(v >= kLo) ? kLo : (v > kHi ? kHi : v);
    output[i] = static_cast<T>(v);
  }
}

// scale * (q - zero_point): q - zero_point is exact in float32 (at most 17 bits), so the
// result is one float32 rounding of the exact product, identical to computing it in double.
template <typename T>
void dequantize_to_f32(const QuantizeParams& p, const T* input, float* output) {
  for (int32_t i = 0; i < p.n; ++i) output[i] = p.scale * static_cast<float>(input[i] - p.zero_point);
}

// One quantization to another (TFLite requantize); each element is read before its output is
// written, so in place is fine.
template <typename In, typename Out>
void requantize(const RequantizeParams& p, const In* input, Out* output) {
  for (int32_t i = 0; i < p.n; ++i) {
    const int32_t v =
        multiply_by_quantized_multiplier(input[i] + p.input_offset, p.multiplier, p.shift) + p.output_offset;
    output[i] = static_cast<Out>(clamp_i32(v, p.act_min, p.act_max));
  }
}

}  // namespace mcuflow::kernels::detail
