// Fully connected, int16 activations and int8 weights (both symmetric: no offsets), int64
// bias and accumulator. per_channel selects one multiplier/shift per output channel.
#include "mcuflow/kernels/kernels.h"
#include "s16_common.h"

namespace mcuflow::kernels {

void fc_s16(const FcParams& p, const int16_t* input, const int8_t* weights, const int64_t* bias,
            const int32_t* multipliers, const int32_t* shifts, int16_t* output) {
  for (int32_t r = 0; r < p.rows; ++r) {
    const int16_t* in = input + r * p.in_c;
    for (int32_t oc = 0; oc < p.out_c; ++oc) {
      const int64_t acc = detail::dot_s16_s8_wide(in, weights + oc * p.in_c, p.in_c) + (bias ? bias[oc] : 0);
      const int32_t q = p.per_channel ? oc : 0;
      *output++ = detail::output_stage_s16(acc, multipliers[q], shifts[q], p.out);
    }
  }
}

}  // namespace mcuflow::kernels
