// Average pooling, int16, MVE: each window summed four channels at a time in int32 lanes (exact:
// avgpool_s16_mve_refusal bounds the window), then the reference's division rounding half away
// from zero, channel by channel. The output never overlaps the input (the reference's contract).
#include "mve_s16_blocks.h"
#include "../reference/pool_common.h"

namespace mcuflow::kernels {

void avgpool_s16_mve(const PoolParams& p, const int16_t* input, int16_t* output) {
  const PoolParams q = p;  // a copy the compiler may keep in registers across the stores
  for (int32_t oy = 0; oy < q.out_h; ++oy) {
    const int32_t iy0 = oy * q.stride_h - q.pad_top;
    const detail::TapRange rows = detail::valid_taps(iy0, q.k_h, 1, q.in_h);
    for (int32_t ox = 0; ox < q.out_w; ++ox) {
      const int32_t ix0 = ox * q.stride_w - q.pad_left;
      const detail::TapRange cols = detail::valid_taps(ix0, q.k_w, 1, q.in_w);
      const int32_t count = (rows.end - rows.begin) * (cols.end - cols.begin);
      for (int32_t c = 0; c < q.c; c += 4) {
        const mve_pred16_t lanes = vctp32q(uint32_t(q.c - c));
        int32x4_t sum = vdupq_n_s32(0);
        for (int32_t ky = rows.begin; ky < rows.end; ++ky) {
          const int16_t* in = input + ((iy0 + ky) * q.in_w + ix0 + cols.begin) * q.c + c;
          for (int32_t kx = cols.begin; kx < cols.end; ++kx, in += q.c) sum = vaddq_s32(sum, vldrhq_z_s32(in, lanes));
        }
        int32_t sums[4];
        vstrwq_s32(sums, sum);
        const int32_t channels = q.c - c < 4 ? q.c - c : 4;
        for (int32_t k = 0; k < channels; ++k)
          *output++ = detail::clamp_to_s16(detail::rounded_average(int64_t(sums[k]), count), q.act_min, q.act_max);
      }
    }
  }
}

}  // namespace mcuflow::kernels
