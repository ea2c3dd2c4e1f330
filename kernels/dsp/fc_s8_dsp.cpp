// Fully connected, int8, DSP extension: rows expanded to int16 once (kernels_dsp.h), then
// SMLAD against every weight row; four rows per pass where there are four, else one.
#include "mcuflow/kernels/kernels_dsp.h"

namespace mcuflow::kernels {
namespace {

template <bool kFast>
void run(const FcParams& p, const dsp::Output& o, const int8_t* input, const int8_t* weights,
         const DspChannel* channels, int16_t* scratch, int8_t* output) {
  int32_t r = 0;
  for (; r + kDspPixels <= p.rows; r += kDspPixels) {
    for (int32_t slot = 0; slot < kDspPixels; ++slot) {
      dsp::SlotWriter(scratch, slot, p.input_offset).run(input + (r + slot) * p.in_c, p.in_c, 0);
    }
    dsp::conv_block<kFast>(p.in_c, p.out_c, o, scratch, weights, channels, kDspPixels, output + r * p.out_c);
  }
  for (; r < p.rows; ++r) {
    dsp::SlotWriter(scratch, 0, p.input_offset).run(input + r * p.in_c, p.in_c, 0);
    dsp::single_row<kFast>(p.in_c, p.out_c, o, scratch, weights, channels, output + r * p.out_c);
  }
}

}  // namespace

void fc_s8_dsp(const FcParams& p, const int8_t* input, const int8_t* weights, const DspChannel* channels,
               int16_t* scratch, int8_t* output) {
  const dsp::Output o{p.output_offset, p.act_min, p.act_max};
  if (dsp::fast_outputs(o, channels, p.out_c)) run<true>(p, o, input, weights, channels, scratch, output);
  else run<false>(p, o, input, weights, channels, scratch, output);
}

}  // namespace mcuflow::kernels
