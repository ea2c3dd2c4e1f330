// Average pooling whose padding counts, float32: padding elements are 0 and every window
// divides by k_h * k_w (PyTorch count_include_pad=True).
#include "mcuflow/kernels/kernels.h"

namespace mcuflow::kernels {

void avgpool_include_pad_f32(const AvgPoolIncludePadParams& params, const float* input, float* output) {
  const PoolParams& p = params.pool;
  const float count = static_cast<float>(p.k_h * p.k_w);
  for (int32_t oy = 0; oy < p.out_h; ++oy) {
    const int32_t iy0 = oy * p.stride_h - p.pad_top;
    for (int32_t ox = 0; ox < p.out_w; ++ox) {
      const int32_t ix0 = ox * p.stride_w - p.pad_left;
      for (int32_t c = 0; c < p.c; ++c) {
        float sum = 0.0f;
        for (int32_t ky = 0; ky < p.k_h; ++ky) {
          const int32_t iy = iy0 + ky;
          if (iy < 0 || iy >= p.in_h) continue;
          for (int32_t kx = 0; kx < p.k_w; ++kx) {
            const int32_t ix = ix0 + kx;
            if (ix >= 0 && ix < p.in_w) sum += input[(iy * p.in_w + ix) * p.c + c];
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
