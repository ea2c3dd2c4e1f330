// Fully connected, int8 activations and packed int4 weights, MVE: fc_s8_mve on the weights
// unpacked and the channel tables built in the scratch (kernels_mve.h).
#include "mve_blocks.h"

namespace mcuflow::kernels {

void fc_s8_w4_mve(const FcParams& p, const int8_t* input, const uint8_t* weights, const int32_t* bias,
                  const int32_t* multipliers, const int32_t* shifts, int8_t* scratch, int8_t* output) {
  const MveGemmLayout layout{p.in_c, p.out_c};
  const mve::W4Inputs w = mve::build_w4_inputs(layout, layout.depth * layout.out_c, weights, bias, multipliers, shifts,
                                               p.per_channel == 1, p.input_offset, scratch);
  fc_s8_mve(p, input, w.weights, w.prepared, w.rest, output);
}

}  // namespace mcuflow::kernels
