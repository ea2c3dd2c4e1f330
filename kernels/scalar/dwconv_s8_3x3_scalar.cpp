// 3x3 depthwise conv, int8, Armv6-M (kernels_scalar.h). Per output pixel, nine tap pointers:
// the input pixel under each tap, or the prepared zero point row for a padding tap, so every
// pixel (border or not) runs the same branch-free channel loop: per channel, bias' plus nine
// products of LDRSB [tap, c] and the channel's int32 weights. Pixels in the reference's order
// (raster_order.h), so it may run in place wherever the reference may.
#include "../reference/raster_order.h"
#include "scalar_gemm.h"

namespace mcuflow::kernels {

void dwconv_s8_3x3_scalar(const DwConvParams& p, const int8_t* input, const int32_t* prepared, int8_t* output) {
  const int32_t channels = p.in_c;
  const int32_t* requant_words = prepared + channels * kScalarDwChannelWords;
  const scalar::Requant r{requant_words, p.output_offset, p.act_min, p.act_max};
  const auto* zero_points = reinterpret_cast<const int8_t*>(requant_words + channels * kScalarRequantWords);
  detail::for_each_output_pixel(p.out_h, p.out_w, input, output, [&](int32_t oy, int32_t ox) {
    const int8_t* tap[kScalarDwTaps];
    const int32_t iy0 = oy * p.stride_h - p.pad_top, ix0 = ox * p.stride_w - p.pad_left;
    for (int32_t ky = 0; ky < 3; ++ky) {
      const int32_t iy = iy0 + ky * p.dil_h;
      for (int32_t kx = 0; kx < 3; ++kx) {
        const int32_t ix = ix0 + kx * p.dil_w;
        const bool inside = iy >= 0 && iy < p.in_h && ix >= 0 && ix < p.in_w;
        tap[ky * 3 + kx] = inside ? input + (iy * p.in_w + ix) * channels : zero_points;
      }
    }
    int8_t* out = output + (oy * p.out_w + ox) * channels;
    const int32_t* w = prepared;
    for (int32_t c = 0; c < channels; ++c, w += kScalarDwChannelWords) {
      int32_t acc = w[0];
      for (int32_t t = 0; t < kScalarDwTaps; ++t) acc += tap[t][c] * w[1 + t];
      out[c] = scalar::requantize(acc, r, c);
    }
  });
}

}  // namespace mcuflow::kernels
