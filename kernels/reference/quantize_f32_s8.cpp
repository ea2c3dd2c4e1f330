// float32 -> int8: q = clamp(round_half_away(x / scale) + zero_point, -128, 127), in float32
// like TFLite's quantize (a true division, not a multiply by 1/scale).
#include <cmath>

#include "mcuflow/kernels/kernels.h"

namespace mcuflow::kernels {

void quantize_f32_s8(const QuantizeParams& p, const float* input, int8_t* output) {
  const float zp = static_cast<float>(p.zero_point);
  for (int32_t i = 0; i < p.n; ++i) {
    // Adding the zero point in float is exact wherever the result is not clamped anyway;
    // clamping before the conversion keeps it defined for huge inputs (NaN maps to -128).
    float v = std::round(input[i] / p.scale) + zp;
    v = !(v >= -128.0f) ? -128.0f : (v > 127.0f ? 127.0f : v);
    output[i] = static_cast<int8_t>(v);
  }
}

}  // namespace mcuflow::kernels
