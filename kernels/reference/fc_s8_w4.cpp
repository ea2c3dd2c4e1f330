// Fully connected, int8 activations and packed int4 weights [out_c][in_c] (w4_common.h): fc_s8's
// integers on the weights unpacked. per_channel selects one multiplier/shift per output channel.
#include "mcuflow/kernels/kernels.h"
#include "w4_common.h"

namespace mcuflow::kernels {

void fc_s8_w4(const FcParams& p, const int8_t* input, const uint8_t* weights, const int32_t* bias,
              const int32_t* multipliers, const int32_t* shifts, int8_t* output) {
  for (int32_t r = 0; r < p.rows; ++r) {
    const int8_t* in = input + r * p.in_c;
    for (int32_t oc = 0; oc < p.out_c; ++oc) {
      const int32_t acc = detail::dot_s8_w4(in, weights, oc * p.in_c, p.in_c, p.input_offset);
      const int32_t q = p.per_channel ? oc : 0;
      *output++ = detail::output_stage_s8(acc, bias, oc, multipliers[q], shifts[q], p.out);
    }
  }
}

}  // namespace mcuflow::kernels
