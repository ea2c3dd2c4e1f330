// Pointwise (1x1) convolution, int16 activations and int8 weights, DSP extension: blocks of
// kDspPixels input pixels repaired into SMLAD's pairs (kernels_dsp.h), then every weight row
// against the block (int32 path of s16_tiers.h; else the reference).
#include "dsp_s16_blocks.h"
#include "mcuflow/kernels/kernels.h"

namespace mcuflow::kernels {

void conv_s16_1x1_dsp(const ConvParams& p, const int16_t* input, const int8_t* weights, const int64_t* bias,
                      const int32_t* multipliers, const int32_t* shifts, int16_t* scratch, int16_t* output) {
  const dsp::S16Matrix m{weights, bias, multipliers, shifts, 1, p.in_c, p.out_c, p.out};
  if (!m.fits_int32()) {
    conv_s16(p, input, weights, bias, multipliers, shifts, output);
    return;
  }
  const int32_t out_w = p.out_w, row_step = p.stride_h * p.in_w * p.in_c, pixel_step = p.stride_w * p.in_c;
  const int32_t in_c = p.in_c;
  // Output pixel q reads input pixel (q / out_w * stride_h, q % out_w * stride_w).
  m.run(p.out_h * out_w, scratch, output, [&](int32_t q, int32_t slot) {
    dsp::S16Writer(scratch, slot, 0).run(input + q / out_w * row_step + q % out_w * pixel_step, in_c, 0);
  });
}

}  // namespace mcuflow::kernels
