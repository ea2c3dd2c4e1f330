// Convolution, int8 activations and packed int4 weights, DSP extension, grouped or not: the
// weights unpacked into the front of the scratch, then conv_s8_dsp on the copy (kernels_dsp.h).
#include "dsp_blocks.h"

namespace mcuflow::kernels {

void conv_s8_w4_dsp(const ConvParams& p, const int8_t* input, const uint8_t* weights, const int32_t* bias,
                    const int32_t* multipliers, const int32_t* shifts, int8_t* scratch, int8_t* output) {
  int16_t* rest = dsp::unpack_into_scratch(weights, p.out_c * p.k_h * p.k_w * (p.in_c / p.groups), scratch);
  conv_s8_dsp(p, input, scratch, bias, multipliers, shifts, rest, output);
}

}  // namespace mcuflow::kernels
