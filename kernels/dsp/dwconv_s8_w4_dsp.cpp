// Depthwise convolution (ch_mult 1), int8 activations and packed int4 weights, DSP extension:
// dwconv_s8_dsp on its prepared input (the weights doubled and widened, the padding pixel)
// built in the scratch from the packed weights (kernels_dsp.h).
#include "dsp_blocks.h"

namespace mcuflow::kernels {

void dwconv_s8_w4_dsp(const DwConvParams& p, const int8_t* input, const uint8_t* weights, const int32_t* bias,
                      const int32_t* multipliers, const int32_t* shifts, int8_t* scratch, int8_t* output) {
  auto* prepared = reinterpret_cast<int32_t*>(scratch);
  const PackedInt4Weights packed{weights};
  for (int32_t i = 0, words = dsp_dw_prepared_words(p); i < words; ++i) prepared[i] = dsp_dw_prepared_word(p, packed, i);
  dwconv_s8_dsp(p, input, prepared, bias, multipliers, shifts, output);
}

}  // namespace mcuflow::kernels
