// Fully connected, int8 activations and packed int4 weights, DSP extension: per block of output
// channels (dsp_fc_w4_block), their weights unpacked into the front of the scratch, then
// fc_s8_dsp's rows (dsp::fc_rows) on them (kernels_dsp.h).
#include "dsp_blocks.h"

namespace mcuflow::kernels {

void fc_s8_w4_dsp(const FcParams& p, const int8_t* input, const uint8_t* weights, const int32_t* bias,
                  const int32_t* multipliers, const int32_t* shifts, int8_t* scratch, int8_t* output) {
  const int32_t block = dsp_fc_w4_block(p), step = p.per_channel ? 1 : 0;
  for (int32_t oc = 0; oc < p.out_c; oc += block) {
    const int32_t channels = p.out_c - oc < block ? p.out_c - oc : block;
    // block is even: the block's first weight starts a byte
    int16_t* rest = dsp::unpack_into_scratch(weights + oc * p.in_c / 2, channels * p.in_c, scratch);
    dsp::fc_rows(p, channels, p.out_c, {bias + oc, multipliers + oc * step, shifts + oc * step, step}, input, scratch,
                 rest, output + oc);
  }
}

}  // namespace mcuflow::kernels
