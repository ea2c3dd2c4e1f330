// Pointwise (1x1) convolution, int8 activations and packed int4 weights, DSP extension: the
// weights unpacked into the front of the scratch, then conv_s8_dsp (a 1x1 window) on the copy
// (kernels_dsp.h).
#include "dsp_blocks.h"

namespace mcuflow::kernels {

void conv_s8_w4_1x1_dsp(const ConvParams& p, const int8_t* input, const uint8_t* weights, const int32_t* bias,
                        const int32_t* multipliers, const int32_t* shifts, int8_t* scratch, int8_t* output) {
  int16_t* rest = dsp::unpack_into_scratch(weights, p.out_c * p.in_c, scratch);
  conv_s8_dsp(p, input, scratch, bias, multipliers, shifts, rest, output);
}

}  // namespace mcuflow::kernels
