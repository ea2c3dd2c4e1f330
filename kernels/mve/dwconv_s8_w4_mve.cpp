// Depthwise convolution (channel multiplier 1), int8 activations and packed int4 weights, MVE:
// dwconv_s8_mve on its prepared input (channel tables and weights) built in the scratch from the
// packed weights (kernels_mve.h).
#include "mve_blocks.h"

namespace mcuflow::kernels {

void dwconv_s8_w4_mve(const DwConvParams& p, const int8_t* input, const uint8_t* weights, const int32_t* bias,
                      const int32_t* multipliers, const int32_t* shifts, int8_t* scratch, int8_t* output) {
  auto* prepared = reinterpret_cast<uint8_t*>(scratch);
  mve::build_prepared(MveDwLayout{p.in_c, p.k_h * p.k_w},
                      MveReferenceInputs{WeightValues(weights, true), bias, multipliers, shifts, true, p.input_offset},
                      prepared);
  dwconv_s8_mve(p, input, prepared, output);
}

}  // namespace mcuflow::kernels
