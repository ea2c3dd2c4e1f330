// 3x3 depthwise conv, int8, Armv6-M (kernels_scalar.h). Per output pixel, nine tap pointers:
// the input pixel under each tap, or the prepared zero point row for a padding tap, so every
// pixel (border or not) runs the same branch-free channel loop: per channel, bias' plus nine
// products of LDRSB [tap, c] and the channel's int32 weights. Pixels in the reference's order
// (raster_order.h), so it may run in place wherever the reference may.
#include "../reference/raster_order.h"
#include "scalar_gemm.h"

namespace mcuflow::kernels {

namespace {

// bias' (w[0]) plus the nine taps' input at channel c times the channel's weights w[1..9]:
// five instructions per tap; GCC reloads the weight pointer from a high register for each.
#define MCUFLOW_SCALAR_DW_TAP(t)                   \
  "ldr %[p], [%[taps], #4 * " #t "]\n\t"          \
  "ldrsb %[x], [%[p], %[c]]\n\t"                  \
  "ldr %[p], [%[w], #4 + 4 * " #t "]\n\t"         \
  "muls %[x], %[p], %[x]\n\t"                     \
  "adds %[acc], %[acc], %[x]\n\t"

inline int32_t channel_sum(const int8_t* const (&taps)[kScalarDwTaps], int32_t c, const int32_t* w) {
  int32_t acc, p, x;
  __asm__(".syntax unified\n\t"
          "ldr %[acc], [%[w]]\n\t" MCUFLOW_SCALAR_DW_TAP(0) MCUFLOW_SCALAR_DW_TAP(1) MCUFLOW_SCALAR_DW_TAP(2)
              MCUFLOW_SCALAR_DW_TAP(3) MCUFLOW_SCALAR_DW_TAP(4) MCUFLOW_SCALAR_DW_TAP(5) MCUFLOW_SCALAR_DW_TAP(6)
                  MCUFLOW_SCALAR_DW_TAP(7) MCUFLOW_SCALAR_DW_TAP(8)
          ".syntax divided"
          : [acc] "=&l"(acc), [p] "=&l"(p), [x] "=&l"(x)
          : [taps] "l"(taps), [c] "l"(c), [w] "l"(w)
          : "cc", "memory");
  return acc;
}

#undef MCUFLOW_SCALAR_DW_TAP

}  // namespace

void dwconv_s8_3x3_scalar(const DwConvParams& p, const int8_t* input, const int32_t* prepared, int8_t* output) {
  const int32_t channels = p.in_c;
  const int32_t* requant_words = prepared + channels * kScalarDwChannelWords;
  const scalar::Requant r{requant_words, p.out.output_offset, p.out.act_min, p.out.act_max};
  const auto* zero_points = reinterpret_cast<const int8_t*>(requant_words + channels * kScalarRequantWords);
  detail::for_each_output_pixel(p.out_h, p.out_w, input, output, [&](int32_t oy, int32_t ox) {
    const int8_t* tap[kScalarDwTaps];  // read by channel_sum through memory
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
      out[c] = scalar::requantize(channel_sum(tap, c, w), r, c);
    }
  });
}

}  // namespace mcuflow::kernels
