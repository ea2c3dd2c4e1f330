// Convolution, int8, DSP extension, grouped or not: blocks of kDspPixels output pixels, their
// im2col windows (one per group) expanded once to int16 (kernels_dsp.h), then SMLAD against
// every weight row of the window's group.
#include "dsp_blocks.h"

namespace mcuflow::kernels {

void conv_s8_dsp(const ConvParams& p, const int8_t* input, const int8_t* weights, const int32_t* bias,
                 const int32_t* multipliers, const int32_t* shifts, int16_t* scratch, int8_t* output) {
  dsp::conv_pixels(p, p.k_h * p.k_w * (p.in_c / p.groups), weights, {bias, multipliers, shifts, 1}, scratch, output,
                   [&](int32_t oy, int32_t ox, int32_t slot) { dsp::expand_window(p, input, oy, ox, slot, scratch); });
}

}  // namespace mcuflow::kernels
