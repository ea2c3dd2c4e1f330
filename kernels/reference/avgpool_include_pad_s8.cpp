// Average pooling whose padding counts, int8: padding elements hold the zero point (a real 0)
// and every window divides by k_h * k_w, rounding half away from zero.
#include "mcuflow/kernels/arith.h"
#include "mcuflow/kernels/kernels.h"

namespace mcuflow::kernels {

void avgpool_include_pad_s8(const AvgPoolIncludePadParams& params, const int8_t* input, int8_t* output) {
  const PoolParams& p = params.pool;
  const int32_t count = p.k_h * p.k_w;
  for (int32_t oy = 0; oy < p.out_h; ++oy) {
    const int32_t iy0 = oy * p.stride_h - p.pad_top;
    for (int32_t ox = 0; ox < p.out_w; ++ox) {
      const int32_t ix0 = ox * p.stride_w - p.pad_left;
      for (int32_t c = 0; c < p.c; ++c) {
        int32_t sum = 0;
        for (int32_t ky = 0; ky < p.k_h; ++ky) {
          const int32_t iy = iy0 + ky;
          for (int32_t kx = 0; kx < p.k_w; ++kx) {
            const int32_t ix = ix0 + kx;
            const bool inside = iy >= 0 && iy < p.in_h && ix >= 0 && ix < p.in_w;
            sum += inside ? input[(iy * p.in_w + ix) * p.c + c] : params.pad_value;
          }
        }
        const int32_t avg = sum > 0 ? (sum + count / 2) / count : (sum - count / 2) / count;
        *output++ = static_cast<int8_t>(clamp_i32(avg, p.act_min, p.act_max));
      }
    }
  }
}

}  // namespace mcuflow::kernels
