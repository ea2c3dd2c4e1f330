// Average pooling, float32: mean over the valid (non-padding) part of the window.
#include "mcuflow/kernels/kernels.h"

namespace mcuflow::kernels {

void avgpool_f32(const PoolParams& p, const float* input, float* output) {
  for (int32_t oy = 0; oy < p.out_h; ++oy) {
    const int32_t iy0 = oy * p.stride_h - p.pad_top;
    const int32_t ky_begin = iy0 < 0 ? -iy0 : 0;
    const int32_t ky_end = p.k_h < p.in_h - iy0 ? p.k_h : p.in_h - iy0;
    for (int32_t ox = 0; ox < p.out_w; ++ox) {
      const int32_t ix0 = ox * p.stride_w - p.pad_left;
      const int32_t kx_begin = ix0 < 0 ? -ix0 : 0;
      const int32_t kx_end = p.k_w < p.in_w - ix0 ? p.k_w : p.in_w - ix0;
      const float count = static_cast<float>((ky_end - ky_begin) * (kx_end - kx_begin));
      for (int32_t c = 0; c < p.c; ++c) {
        float sum = 0.0f;
        for (int32_t ky = ky_begin; ky < ky_end; ++ky) {
          for (int32_t kx = kx_begin; kx < kx_end; ++kx) {
            sum += input[((iy0 + ky) * p.in_w + ix0 + kx) * p.c + c];
          }
        }
        float avg = sum / count;
        avg = avg < p.act_min_f ? p.act_min_f : avg;
        *output++ = avg > p.act_max_f ? p.act_max_f : avg;
      }
    }
  }
}

}  // namespace mcuflow::kernels
