// 2-D convolution, int16 activations and int8 per-channel weights (OHWI), int64 bias and
// accumulator; padding taps contribute nothing (the input zero point is 0). Grouped: output
// channel oc reads the in_c / groups input channels of its group, oc / (out_c / groups).
#include "mcuflow/kernels/kernels.h"
#include "s16_common.h"
#include "window.h"

namespace mcuflow::kernels {

void conv_s16(const ConvParams& p, const int16_t* input, const int8_t* weights, const int64_t* bias,
              const int32_t* multipliers, const int32_t* shifts, int16_t* output) {
  const int32_t group_in = p.in_c / p.groups, group_out = p.out_c / p.groups;
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
            const int16_t* in = input + ((iy0 + ky * p.dil_h) * p.in_w + ix0 + kx * p.dil_w) * p.in_c;
            acc += detail::dot_s16_s8_wide(in + oc / group_out * group_in,
                                           weights + ((oc * p.k_h + ky) * p.k_w + kx) * group_in, group_in);
          }
        }
        *output++ = detail::output_stage_s16(acc, multipliers[oc], shifts[oc], p.out);
      }
    }
  }
}

}  // namespace mcuflow::kernels
