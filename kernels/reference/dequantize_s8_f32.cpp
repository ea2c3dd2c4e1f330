// int8 -> float32: scale * (q - zero_point).
#include "convert_common.h"
#include "mcuflow/kernels/kernels.h"

namespace mcuflow::kernels {

void dequantize_s8_f32(const QuantizeParams& p, const int8_t* input, float* output) {
  detail::dequantize_to_f32(p, input, output);
}

}  // namespace mcuflow::kernels
