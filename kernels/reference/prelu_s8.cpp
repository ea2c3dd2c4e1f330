// PReLU, int8: two requantizations, one for inputs at or above the zero point and one for
// those below it scaled by their channel's int8 slope (params.h). Element-wise, so in place is fine.
#include "mcuflow/kernels/arith.h"
#include "mcuflow/kernels/kernels.h"

namespace mcuflow::kernels {

void prelu_s8(const PreluParams& p, const int8_t* input, const int8_t* alpha, int8_t* output) {
  int32_t i = 0;
  for (int32_t o = 0; o < p.outer; ++o)
    for (int32_t c = 0; c < p.channels; ++c)
      for (int32_t k = 0; k < p.inner; ++k, ++i) {
        const int32_t d = input[i] + p.input_offset;
        const int32_t v = d >= 0 ? multiply_by_quantized_multiplier(d, p.positive_multiplier, p.positive_shift)
                                 : multiply_by_quantized_multiplier(d * alpha[c], p.negative_multiplier,
                                                                    p.negative_shift);
        output[i] = static_cast<int8_t>(clamp_i32(v + p.output_offset, p.act_min, p.act_max));
      }
}

}  // namespace mcuflow::kernels
