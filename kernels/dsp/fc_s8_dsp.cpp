// Fully connected, int8, DSP extension: rows expanded to int16 once (kernels_dsp.h), then
// SMLAD against every weight row; four rows per pass where there are four, else one (dsp::fc_rows).
#include "dsp_blocks.h"

namespace mcuflow::kernels {

void fc_s8_dsp(const FcParams& p, const int8_t* input, const int8_t* weights, const int32_t* bias,
               const int32_t* multipliers, const int32_t* shifts, int16_t* scratch, int8_t* output) {
  dsp::fc_rows(p, p.out_c, p.out_c, {bias, multipliers, shifts, p.per_channel ? 1 : 0}, input, weights, scratch, output);
}

}  // namespace mcuflow::kernels
