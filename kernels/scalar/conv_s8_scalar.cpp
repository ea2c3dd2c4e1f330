// Any conv, int8, Armv6-M (kernels_scalar.h): each output pixel's window, one group's channels
// at a time, is gathered, widened to int32, into the `window` scratch (padding taps = the input zero point, which
// the folded bias cancels), then multiplied like a 1x1 conv's input pixel by the group's output
// channels. Pixels in the reference's order (raster_order.h).
#include "../reference/raster_order.h"
#include "scalar_gemm.h"

namespace mcuflow::kernels {

void conv_s8_scalar(const ConvParams& p, const int8_t* input, const int32_t* prepared, int32_t* window,
                    int8_t* output) {
  const int32_t zero_point = int8_t(-p.input_offset);
  const int32_t group_in = p.in_c / p.groups, group_out = p.out_c / p.groups;
  const int32_t depth = scalar_conv_depth(p), group_words = scalar_conv_group_words(p);
  detail::for_each_output_pixel(p.out_h, p.out_w, input, output, [&](int32_t oy, int32_t ox) {
    const int32_t iy0 = oy * p.stride_h - p.pad_top, ix0 = ox * p.stride_w - p.pad_left;
    int8_t* out = output + (oy * p.out_w + ox) * p.out_c;
    for (int32_t g = 0; g < p.groups; ++g, out += group_out) {
      const int8_t* group_input = input + g * group_in;
      int32_t* dst = window;
      for (int32_t ky = 0; ky < p.k_h; ++ky) {
        const int32_t iy = iy0 + ky * p.dil_h;
        for (int32_t kx = 0; kx < p.k_w; ++kx, dst += group_in) {
          const int32_t ix = ix0 + kx * p.dil_w;
          if (iy < 0 || iy >= p.in_h || ix < 0 || ix >= p.in_w) {
            for (int32_t i = 0; i < group_in; ++i) dst[i] = zero_point;
          } else {
            scalar::widen_row(group_input + (iy * p.in_w + ix) * p.in_c, group_in, dst);
          }
        }
      }
      const int32_t* words = prepared + g * group_words;
      scalar::gemm_row(window, depth, group_out, words, {words, p.out.output_offset, p.out.act_min, p.out.act_max}, out);
    }
  });
}

}  // namespace mcuflow::kernels
