// Convolution (groups 1), int16 activations and int8 weights, DSP extension: blocks of
// kDspPixels im2col windows expanded into SMLAD's pairs (kernels_dsp.h), then every weight row
// against the block (int32 path of s16_tiers.h; else the reference).
#include "dsp_s16_blocks.h"
#include "mcuflow/kernels/kernels.h"

namespace mcuflow::kernels {

void conv_s16_dsp(const ConvParams& p, const int16_t* input, const int8_t* weights, const int64_t* bias,
                  const int32_t* multipliers, const int32_t* shifts, int16_t* scratch, int16_t* output) {
  const dsp::S16Matrix m{weights, bias, multipliers, shifts, 1, p.k_h * p.k_w * p.in_c, p.out_c, p.out};
  if (!m.fits_int32()) {
    conv_s16(p, input, weights, bias, multipliers, shifts, output);
    return;
  }
  const int32_t out_w = p.out_w;
  m.run(p.out_h * out_w, scratch, output,
        [&](int32_t q, int32_t slot) { dsp::expand_window(p, input, q / out_w, q % out_w, slot, scratch); });
}

}  // namespace mcuflow::kernels
