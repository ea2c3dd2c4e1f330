// float32 -> int16: q = clamp(round_half_away(x / scale) + zero_point, -32768, 32767).
#include "convert_common.h"
#include "mcuflow/kernels/kernels.h"

namespace mcuflow::kernels {

void quantize_f32_s16(const QuantizeParams& p, const float* input, int16_t* output) {
  detail::quantize_from_f32(p, input, output);
}

}  // namespace mcuflow::kernels
