// 1x1 convolution, float32, DSP tier on a core with an FPU: bit for bit conv_f32 for a 1x1 kernel
// without padding (any stride; pointwise_refusal). Each output pixel is one input pixel times the
// weight rows: two pixels x four output channels per pass, VLDM of four inputs or weights, a
// VMLA.F32 per product, each output's products in the reference's order (f32_dsp_blocks.h).
#include "f32_dsp_blocks.h"

namespace mcuflow::kernels {

void conv_f32_1x1_dsp(const ConvParams& p, const float* input, const float* weights, const float* bias,
                      float* output) {
  dsp_f32::row_pairs(p.out_h * p.out_w, p.out_c, p.in_c, weights, bias, p.act_min_f, p.act_max_f, output,
                     [&](int32_t pixel) {
                       const int32_t oy = pixel / p.out_w, ox = pixel % p.out_w;
                       return input + (oy * p.stride_h * p.in_w + ox * p.stride_w) * p.in_c;
                     });
}

}  // namespace mcuflow::kernels
