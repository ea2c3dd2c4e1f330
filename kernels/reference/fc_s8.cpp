// Fully connected, int8 (TFLite int8 fully-connected semantics; weights symmetric, so no
// weight offset). per_channel selects one multiplier/shift per output channel.
#include "mcuflow/kernels/arith.h"
#include "mcuflow/kernels/kernels.h"
#include "window.h"

namespace mcuflow::kernels {

void fc_s8(const FcParams& p, const int8_t* input, const int8_t* weights, const int32_t* bias,
           const int32_t* multipliers, const int32_t* shifts, int8_t* output) {
  for (int32_t r = 0; r < p.rows; ++r) {
    const int8_t* in = input + r * p.in_c;
    for (int32_t oc = 0; oc < p.out_c; ++oc) {
      int32_t acc = detail::dot_s8(in, weights + oc * p.in_c, p.in_c, p.input_offset);
      if (bias) acc += bias[oc];
      const int32_t q = p.per_channel ? oc : 0;
      acc = multiply_by_quantized_multiplier(acc, multipliers[q], shifts[q]) + p.out.output_offset;
      *output++ = static_cast<int8_t>(clamp_i32(acc, p.out.act_min, p.out.act_max));
    }
  }
}

}  // namespace mcuflow::kernels
