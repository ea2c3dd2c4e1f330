// Depthwise convolution, int8 activations and packed int4 per-channel weights [k_h][k_w][out_c]
// (w4_common.h): dwconv_s8's integers on the weights unpacked. Output channel oc = ic * ch_mult + m
// reads input channel ic; padding taps (the input zero point, offset value 0) are skipped.
#include "mcuflow/kernels/kernels.h"
#include "w4_common.h"
#include "window.h"

namespace mcuflow::kernels {

void dwconv_s8_w4(const DwConvParams& p, const int8_t* input, const uint8_t* weights, const int32_t* bias,
                  const int32_t* multipliers, const int32_t* shifts, int8_t* output) {
  for (int32_t oy = 0; oy < p.out_h; ++oy) {
    const int32_t iy0 = oy * p.stride_h - p.pad_top;
    const detail::TapRange rows = detail::valid_taps(iy0, p.k_h, p.dil_h, p.in_h);
    for (int32_t ox = 0; ox < p.out_w; ++ox) {
      const int32_t ix0 = ox * p.stride_w - p.pad_left;
      const detail::TapRange cols = detail::valid_taps(ix0, p.k_w, p.dil_w, p.in_w);
      for (int32_t oc = 0; oc < p.out_c; ++oc) {
        int32_t acc = 0;
        for (int32_t ky = rows.begin; ky < rows.end; ++ky) {
          for (int32_t kx = cols.begin; kx < cols.end; ++kx) {
            const int32_t pixel = (iy0 + ky * p.dil_h) * p.in_w + ix0 + kx * p.dil_w;
            acc += (input[pixel * p.in_c + oc / p.ch_mult] + p.input_offset) *
                   detail::weight_s4(weights, (ky * p.k_w + kx) * p.out_c + oc);
          }
        }
        *output++ = detail::output_stage_s8(acc, bias, oc, multipliers[oc], shifts[oc], p.out);
      }
    }
  }
}

}  // namespace mcuflow::kernels
