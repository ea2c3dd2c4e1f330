// Average pooling, int16, DSP extension: each window summed four channels at a time in int32
// (exact: avgpool_s16_dsp_refusal bounds the window), two input words per position (SXTAH and
// ADD ASR #16 take their halves), then the reference's division rounding half away from zero.
#include "dsp_s16_blocks.h"
#include "../reference/pool_common.h"
#include "../reference/s16_common.h"

namespace mcuflow::kernels {

void avgpool_s16_dsp(const PoolParams& p, const int16_t* input, int16_t* output) {
  const PoolParams q = p;  // a copy the compiler may keep in registers across the stores
  const int32_t row_step = q.in_w * q.c;
  for (int32_t oy = 0; oy < q.out_h; ++oy) {
    const int32_t iy0 = oy * q.stride_h - q.pad_top;
    const detail::TapRange rows = detail::valid_taps(iy0, q.k_h, 1, q.in_h);
    for (int32_t ox = 0; ox < q.out_w; ++ox) {
      const int32_t ix0 = ox * q.stride_w - q.pad_left;
      const detail::TapRange cols = detail::valid_taps(ix0, q.k_w, 1, q.in_w);
      const int32_t width = cols.end - cols.begin, count = (rows.end - rows.begin) * width;
      const int16_t* window = input + ((iy0 + rows.begin) * q.in_w + ix0 + cols.begin) * q.c;
      auto average = [&](int32_t sum) {
        return detail::clamp_to_s16(detail::rounded_average(sum, count), q.act_min, q.act_max);
      };
      int32_t c = 0;
      for (; c + 4 <= q.c; c += 4, output += 4) {
        int32_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;
        const int16_t* row = window + c;
        for (int32_t ky = rows.begin; ky < rows.end; ++ky, row += row_step) {
          const int16_t* in = row;
          for (int32_t kx = 0; kx < width; ++kx, in += q.c) {
            const int32_t x01 = dsp::read_word(in), x23 = dsp::read_word(in + 2);
            s0 += int16_t(x01);
            s1 += x01 >> 16;
            s2 += int16_t(x23);
            s3 += x23 >> 16;
          }
        }
        output[0] = average(s0);
        output[1] = average(s1);
        output[2] = average(s2);
        output[3] = average(s3);
      }
      for (; c < q.c; ++c) {  // the last channels, one at a time
        int32_t sum = 0;
        const int16_t* row = window + c;
        for (int32_t ky = rows.begin; ky < rows.end; ++ky, row += row_step) {
          for (int32_t kx = 0; kx < width; ++kx) sum += row[kx * q.c];
        }
        *output++ = average(sum);
      }
    }
  }
}

}  // namespace mcuflow::kernels
