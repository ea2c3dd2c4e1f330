// Depthwise convolution, int16 activations and int8 per-channel weights [k_h][k_w][out_c],
// int64 bias and accumulator; output channel oc = ic * ch_mult + m reads input channel ic.
#include "mcuflow/kernels/kernels.h"
#include "s16_common.h"
#include "window.h"

namespace mcuflow::kernels {

void dwconv_s16(const DwConvParams& p, const int16_t* input, const int8_t* weights, const int64_t* bias,
                const int32_t* multipliers, const int32_t* shifts, int16_t* output) {
  for (int32_t oy = 0; oy < p.out_h; ++oy) {
    const int32_t iy0 = oy * p.stride_h - p.pad_top;
    const detail::TapRange rows = detail::valid_taps(iy0, p.k_h, p.dil_h, p.in_h);
    for (int32_t ox = 0; ox < p.out_w; ++ox) {
      const int32_t ix0 = ox * p.stride_w - p.pad_left;
      const detail::TapRange cols = detail::valid_taps(ix0, p.k_w, p.dil_w, p.in_w);
      for (int32_t oc = 0; oc < p.out_c; ++oc) {
        int64_t acc = bias ? bias[oc] : 0;
        for (int32_t ky = rows.begin; ky < rows.end; ++ky) {
          for (int32_t kx = cols.begin; kx < cols.end; ++kx) {
            const int32_t pixel = (iy0 + ky * p.dil_h) * p.in_w + ix0 + kx * p.dil_w;
            acc += int32_t(input[pixel * p.in_c + oc / p.ch_mult]) * weights[(ky * p.k_w + kx) * p.out_c + oc];
          }
        }
        *output++ = detail::output_stage_s16(acc, multipliers[oc], shifts[oc], p.out);
      }
    }
  }
}

}  // namespace mcuflow::kernels
