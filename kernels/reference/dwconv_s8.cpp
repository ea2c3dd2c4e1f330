// Depthwise convolution, int8 (TFLite int8 per-channel depthwise semantics).
// Weights [k_h][k_w][out_c]; output channel oc = ic * ch_mult + m reads input channel ic.
#include "mcuflow/kernels/arith.h"
#include "mcuflow/kernels/kernels.h"
#include "raster_order.h"

namespace mcuflow::kernels {

void dwconv_s8(const DwConvParams& p, const int8_t* input, const int8_t* weights, const int32_t* bias,
               const int32_t* multipliers, const int32_t* shifts, int8_t* output) {
  detail::for_each_output_pixel(p.out_h, p.out_w, input, output, [&](int32_t oy, int32_t ox) {
    const int32_t iy0 = oy * p.stride_h - p.pad_top;
    const int32_t ix0 = ox * p.stride_w - p.pad_left;
    int8_t* out = output + (oy * p.out_w + ox) * p.out_c;
    // (ic, m) in this order visits oc = ic * ch_mult + m in output order, with no division.
    for (int32_t ic = 0; ic < p.in_c; ++ic) {
      for (int32_t m = 0; m < p.ch_mult; ++m) {
        const int32_t oc = ic * p.ch_mult + m;
        int32_t acc = 0;
        for (int32_t ky = 0; ky < p.k_h; ++ky) {
          const int32_t iy = iy0 + ky * p.dil_h;
          if (iy < 0 || iy >= p.in_h) continue;  // padding contributes nothing
          for (int32_t kx = 0; kx < p.k_w; ++kx) {
            const int32_t ix = ix0 + kx * p.dil_w;
            if (ix < 0 || ix >= p.in_w) continue;
            const int32_t x = input[(iy * p.in_w + ix) * p.in_c + ic] + p.input_offset;
            acc += x * weights[(ky * p.k_w + kx) * p.out_c + oc];
          }
        }
        if (bias) acc += bias[oc];
        acc = multiply_by_quantized_multiplier(acc, multipliers[oc], shifts[oc]) + p.output_offset;
        out[oc] = static_cast<int8_t>(clamp_i32(acc, p.act_min, p.act_max));
      }
    }
  });
}

}  // namespace mcuflow::kernels
