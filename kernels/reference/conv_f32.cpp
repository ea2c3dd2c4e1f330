// 2-D convolution, float32, grouped or not. Weights OHWI; padding positions are skipped.
#include "mcuflow/kernels/kernels.h"

namespace mcuflow::kernels {

void conv_f32(const ConvParams& p, const float* input, const float* weights, const float* bias, float* output) {
  const int32_t group_in = p.in_c / p.groups, group_out = p.out_c / p.groups;
  for (int32_t oy = 0; oy < p.out_h; ++oy) {
    const int32_t iy0 = oy * p.stride_h - p.pad_top;
    for (int32_t ox = 0; ox < p.out_w; ++ox) {
      const int32_t ix0 = ox * p.stride_w - p.pad_left;
      for (int32_t oc = 0; oc < p.out_c; ++oc) {
        const float* group_input = input + oc / group_out * group_in;
        float acc = 0.0f;
        for (int32_t ky = 0; ky < p.k_h; ++ky) {
          const int32_t iy = iy0 + ky * p.dil_h;
          if (iy < 0 || iy >= p.in_h) continue;
          for (int32_t kx = 0; kx < p.k_w; ++kx) {
            const int32_t ix = ix0 + kx * p.dil_w;
            if (ix < 0 || ix >= p.in_w) continue;
            const float* in = group_input + (iy * p.in_w + ix) * p.in_c;
            const float* w = weights + ((oc * p.k_h + ky) * p.k_w + kx) * group_in;
            for (int32_t ic = 0; ic < group_in; ++ic) acc += in[ic] * w[ic];
          }
        }
        if (bias) acc += bias[oc];
        acc = acc < p.act_min_f ? p.act_min_f : acc;
        *output++ = acc > p.act_max_f ? p.act_max_f : acc;
      }
    }
  }
}

}  // namespace mcuflow::kernels
