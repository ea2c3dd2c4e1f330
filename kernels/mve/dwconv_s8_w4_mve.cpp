// Depthwise convolution (channel multiplier 1), int8 activations and packed int4 weights, MVE:
// dwconv_s8_mve on its prepared input (channel tables and weights) built in the scratch from the
// weights unpacked there (kernels_mve.h).
#include "mve_blocks.h"

namespace mcuflow::kernels {

void dwconv_s8_w4_mve(const DwConvParams& p, const int8_t* input, const uint8_t* weights, const int32_t* bias,
                      const int32_t* multipliers, const int32_t* shifts, int8_t* scratch, int8_t* output) {
  const int32_t taps = p.k_h * p.k_w;
  const mve::W4Inputs w = mve::build_w4_inputs(MveDwLayout{p.in_c, taps}, p.out_c * taps, weights, bias, multipliers,
                                               shifts, true, p.input_offset, scratch);
  dwconv_s8_mve(p, input, w.prepared, output);
}

}  // namespace mcuflow::kernels
