// float32 -> int8: q = clamp(round_half_away(x / scale) + zero_point, -128, 127).
#include "convert_common.h"
#include "mcuflow/kernels/kernels.h"

namespace mcuflow::kernels {

void quantize_f32_s8(const QuantizeParams& p, const float* input, int8_t* output) {
  detail::quantize_from_f32(p, input, output);
}

}  // namespace mcuflow::kernels
