// int8 -> float32: scale * (q - zero_point). The product is a single float32 rounding (the
// exact value has at most 24 + 9 significant bits), identical to computing it in double.
#include "mcuflow/kernels/kernels.h"

namespace mcuflow::kernels {

void dequantize_s8_f32(const QuantizeParams& p, const int8_t* input, float* output) {
  for (int32_t i = 0; i < p.n; ++i) {
    output[i] = p.scale * static_cast<float>(input[i] - p.zero_point);
  }
}

}  // namespace mcuflow::kernels
