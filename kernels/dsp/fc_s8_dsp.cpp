// Fully connected, int8, DSP extension: rows expanded to int16 once (kernels_dsp.h), then
// SMLAD against every weight row; four rows per pass where there are four, else one.
#include "dsp_blocks.h"

namespace mcuflow::kernels {
namespace {

template <bool kFast>
void run(const FcParams& p, const dsp::Output& o, const DspTables& t, const int8_t* input, const int8_t* weights,
         int16_t* scratch, int8_t* output) {
  int32_t r = 0;
  for (; r + kDspPixels <= p.rows; r += kDspPixels) {
    for (int32_t slot = 0; slot < kDspPixels; ++slot) {
      dsp::BlockWriter(scratch, slot, p.input_offset).run(input + (r + slot) * p.in_c, p.in_c, 0);
    }
    dsp::conv_block<kFast>(p.in_c, p.out_c, p.out_c, o, t, scratch, weights, kDspPixels, output + r * p.out_c);
  }
  for (; r < p.rows; ++r) {
    dsp::SlotWriter<1>(scratch, 0, p.input_offset).run(input + r * p.in_c, p.in_c, 0);
    dsp::single_row<kFast>(p.in_c, p.out_c, o, t, scratch, weights, output + r * p.out_c);
  }
}

}  // namespace

void fc_s8_dsp(const FcParams& p, const int8_t* input, const int8_t* weights, const int32_t* bias,
               const int32_t* multipliers, const int32_t* shifts, int16_t* scratch, int8_t* output) {
  const dsp::Output o{p.out.output_offset, p.out.act_min, p.out.act_max, p.in_c};
  const DspTables t{bias, multipliers, shifts, p.per_channel ? 1 : 0};
  if (dsp::fast_outputs(o, t, p.out_c)) run<true>(p, o, t, input, weights, scratch, output);
  else run<false>(p, o, t, input, weights, scratch, output);
}

}  // namespace mcuflow::kernels
