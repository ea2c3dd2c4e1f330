// Convolution, int8 activations and packed int4 weights, MVE, any window, grouped or not:
// conv_s8_mve on the weights unpacked and the channel tables built in the scratch (kernels_mve.h).
#include "mve_blocks.h"

namespace mcuflow::kernels {

void conv_s8_w4_mve(const ConvParams& p, const int8_t* input, const uint8_t* weights, const int32_t* bias,
                    const int32_t* multipliers, const int32_t* shifts, int8_t* scratch, int8_t* output) {
  const MveGemmLayout layout = mve_conv_gemm_layout(p);
  const mve::W4Inputs w = mve::build_w4_inputs(layout, layout.depth * layout.out_c, weights, bias, multipliers, shifts,
                                               true, p.input_offset, scratch);
  conv_s8_mve(p, input, w.weights, w.prepared, w.rest, output);
}

}  // namespace mcuflow::kernels
