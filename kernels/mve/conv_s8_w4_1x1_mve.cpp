// Pointwise (1x1) convolution, int8 activations and packed int4 weights, MVE: conv_s8_1x1_mve on
// the weights unpacked and its prepared input built from them in the scratch (kernels_mve.h).
#include "mve_blocks.h"

namespace mcuflow::kernels {

void conv_s8_w4_1x1_mve(const ConvParams& p, const int8_t* input, const uint8_t* weights, const int32_t* bias,
                        const int32_t* multipliers, const int32_t* shifts, int8_t* scratch, int8_t* output) {
  const MvePointwiseLayout layout{p.in_c, p.out_c};
  const mve::W4Inputs w = mve::build_w4_inputs(layout, layout.depth * layout.out_c, weights, bias, multipliers, shifts,
                                               true, p.input_offset, scratch);
  conv_s8_1x1_mve(p, input, w.prepared, w.rest, output);
}

}  // namespace mcuflow::kernels
