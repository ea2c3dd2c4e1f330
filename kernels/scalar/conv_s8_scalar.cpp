// Any conv, int8, Armv6-M (kernels_scalar.h): each output pixel's window is gathered into the
// `window` scratch (padding taps = the input zero point, which the folded bias cancels), then
// multiplied like a 1x1 conv's input pixel. Pixels in the reference's order (raster_order.h).
#include <cstring>

#include "../reference/raster_order.h"
#include "scalar_gemm.h"

namespace mcuflow::kernels {

void conv_s8_scalar(const ConvParams& p, const int8_t* input, const int32_t* prepared, int8_t* window,
                    int8_t* output) {
  const scalar::Requant r{prepared, p.output_offset, p.act_min, p.act_max};
  const int8_t zero_point = int8_t(-p.input_offset);
  const int32_t depth = p.k_h * p.k_w * p.in_c;
  detail::for_each_output_pixel(p.out_h, p.out_w, input, output, [&](int32_t oy, int32_t ox) {
    const int32_t iy0 = oy * p.stride_h - p.pad_top, ix0 = ox * p.stride_w - p.pad_left;
    int8_t* dst = window;
    for (int32_t ky = 0; ky < p.k_h; ++ky) {
      const int32_t iy = iy0 + ky * p.dil_h;
      for (int32_t kx = 0; kx < p.k_w; ++kx, dst += p.in_c) {
        const int32_t ix = ix0 + kx * p.dil_w;
        if (iy < 0 || iy >= p.in_h || ix < 0 || ix >= p.in_w) {
          std::memset(dst, zero_point, size_t(p.in_c));
        } else {
          std::memcpy(dst, input + (iy * p.in_w + ix) * p.in_c, size_t(p.in_c));
        }
      }
    }
    scalar::gemm_row(window, depth, p.out_c, prepared, r, output + (oy * p.out_w + ox) * p.out_c);
  });
}

}  // namespace mcuflow::kernels
