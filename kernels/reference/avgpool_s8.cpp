// Average pooling, int8. The sum over the window clipped to the input is divided by the
// number of valid (non-padding) elements, rounding half away from zero.
#include "mcuflow/kernels/arith.h"
#include "mcuflow/kernels/kernels.h"

namespace mcuflow::kernels {

void avgpool_s8(const PoolParams& p, const int8_t* input, int8_t* output) {
  for (int32_t oy = 0; oy < p.out_h; ++oy) {
    const int32_t iy0 = oy * p.stride_h - p.pad_top;
    const int32_t ky_begin = iy0 < 0 ? -iy0 : 0;
    const int32_t ky_end = p.k_h < p.in_h - iy0 ? p.k_h : p.in_h - iy0;
    for (int32_t ox = 0; ox < p.out_w; ++ox) {
      const int32_t ix0 = ox * p.stride_w - p.pad_left;
      const int32_t kx_begin = ix0 < 0 ? -ix0 : 0;
      const int32_t kx_end = p.k_w < p.in_w - ix0 ? p.k_w : p.in_w - ix0;
      const int32_t count = (ky_end - ky_begin) * (kx_end - kx_begin);
      for (int32_t c = 0; c < p.c; ++c) {
        int32_t sum = 0;
        for (int32_t ky = ky_begin; ky < ky_end; ++ky) {
          for (int32_t kx = kx_begin; kx < kx_end; ++kx) {
            sum += input[((iy0 + ky) * p.in_w + ix0 + kx) * p.c + c];
          }
        }
        // C++ division truncates; biasing by half the divisor towards the sign of the sum
        // turns it into round-half-away-from-zero. (The verifier rules out empty windows.)
        const int32_t avg = sum > 0 ? (sum + count / 2) / count : (sum - count / 2) / count;
        *output++ = static_cast<int8_t>(clamp_i32(avg, p.act_min, p.act_max));
      }
    }
  }
}

}  // namespace mcuflow::kernels
