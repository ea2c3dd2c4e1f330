// 2-D convolution (general, 1x1, grouped), int8 activations and packed int4 per-channel weights
// OHWI [out_c][k_h][k_w][in_c / groups] (w4_common.h): conv_s8's integers on the weights unpacked.
// Padding taps hold the input zero point, whose offset value is 0: they are skipped.
#include "mcuflow/kernels/kernels.h"
#include "w4_common.h"
#include "window.h"

namespace mcuflow::kernels {

void conv_s8_w4(const ConvParams& p, const int8_t* input, const uint8_t* weights, const int32_t* bias,
                const int32_t* multipliers, const int32_t* shifts, int8_t* output) {
  const int32_t group_in = p.in_c / p.groups, group_out = p.out_c / p.groups;
  for (int32_t oy = 0; oy < p.out_h; ++oy) {
    const int32_t iy0 = oy * p.stride_h - p.pad_top;
    const detail::TapRange rows = detail::valid_taps(iy0, p.k_h, p.dil_h, p.in_h);
    for (int32_t ox = 0; ox < p.out_w; ++ox) {
      const int32_t ix0 = ox * p.stride_w - p.pad_left;
      const detail::TapRange cols = detail::valid_taps(ix0, p.k_w, p.dil_w, p.in_w);
      for (int32_t oc = 0; oc < p.out_c; ++oc) {
        const int8_t* group_input = input + oc / group_out * group_in;
        int32_t acc = 0;
        for (int32_t ky = rows.begin; ky < rows.end; ++ky) {
          for (int32_t kx = cols.begin; kx < cols.end; ++kx) {
            const int32_t pixel = (iy0 + ky * p.dil_h) * p.in_w + ix0 + kx * p.dil_w;
            acc += detail::dot_s8_w4(group_input + pixel * p.in_c, weights, ((oc * p.k_h + ky) * p.k_w + kx) * group_in,
                                     group_in, p.input_offset);
          }
        }
        *output++ = detail::output_stage_s8(acc, bias, oc, multipliers[oc], shifts[oc], p.out);
      }
    }
  }
}

}  // namespace mcuflow::kernels
