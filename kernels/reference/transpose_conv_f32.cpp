// Transposed 2-D convolution, float32. Weights OHWI [out_c][k_h][k_w][in_c]; see
// transpose_conv_s8 for how taps land on outputs.
#include "mcuflow/kernels/kernels.h"

namespace mcuflow::kernels {

void transpose_conv_f32(const ConvParams& p, const float* input, const float* weights, const float* bias,
                        float* output) {
  for (int32_t oy = 0; oy < p.out_h; ++oy) {
    for (int32_t ox = 0; ox < p.out_w; ++ox) {
      for (int32_t oc = 0; oc < p.out_c; ++oc) {
        float acc = bias[oc];
        for (int32_t ky = 0; ky < p.k_h; ++ky) {
          const int32_t ty = oy + p.pad_top - ky * p.dil_h;
          if (ty < 0 || ty % p.stride_h != 0 || ty / p.stride_h >= p.in_h) continue;
          for (int32_t kx = 0; kx < p.k_w; ++kx) {
            const int32_t tx = ox + p.pad_left - kx * p.dil_w;
            if (tx < 0 || tx % p.stride_w != 0 || tx / p.stride_w >= p.in_w) continue;
            const float* in = input + ((ty / p.stride_h) * p.in_w + tx / p.stride_w) * p.in_c;
            const float* w = weights + ((oc * p.k_h + ky) * p.k_w + kx) * p.in_c;
            for (int32_t ic = 0; ic < p.in_c; ++ic) acc += in[ic] * w[ic];
          }
        }
        acc = acc < p.act_min_f ? p.act_min_f : acc;
        *output++ = acc > p.act_max_f ? p.act_max_f : acc;
      }
    }
  }
}

}  // namespace mcuflow::kernels
