// int8 -> int8 with another scale/zero point (TFLite int8 requantize): each element is read
// before its output is written, so in place is fine.
#include "mcuflow/kernels/arith.h"
#include "mcuflow/kernels/kernels.h"

namespace mcuflow::kernels {

void requantize_s8(const RequantizeParams& p, const int8_t* input, int8_t* output) {
  for (int32_t i = 0; i < p.n; ++i) {
    const int32_t v =
        multiply_by_quantized_multiplier(input[i] + p.input_offset, p.multiplier, p.shift) + p.output_offset;
    output[i] = static_cast<int8_t>(clamp_i32(v, p.act_min, p.act_max));
  }
}

}  // namespace mcuflow::kernels
