// The scalar depthwise kernels' shared walk (kernels_scalar.h): per output pixel, in the
// reference's order (raster_order.h, so they may run in place wherever the reference may), one
// input pointer per tap — the input pixel under it, or the prepared zero point row for a padding
// tap — so every pixel, border or not, runs the same branch-free channel loop.
#pragma once
#include "../reference/raster_order.h"
#include "scalar_gemm.h"

namespace mcuflow::kernels::scalar {

// A channel's multiply-accumulate of registers x and w into acc, Thumb assembly: Armv6-M has
// no MLA (MULS, then ADDS; x is overwritten).
#ifdef MCUFLOW_SCALAR_MULTIPLY_32
#define MCUFLOW_SCALAR_DW_MAC(acc, x, w) "muls " x ", " w ", " x "\n\tadds " acc ", " acc ", " x "\n\t"
#else
#define MCUFLOW_SCALAR_DW_MAC(acc, x, w) "mla " acc ", " x ", " w ", " acc "\n\t"
#endif

// *out = requantize(channel_sum(taps, out, w)) for every output pixel and channel, w the channel's
// prepared words (channel_sum advances it past bias' and weights to the requantization words).
// taps: scalar_dw_taps(p) words, each tap's input pointer minus the output pixel's, so that the
// output pointer (which the stores advance anyway) indexes every tap's channel: LDRSB [tap, out]
// reads the tap's input at channel c for out = the output pixel + c, and no channel counter is kept.
template <typename ChannelSum>
void depthwise_pixels(const DwConvParams& p, const int8_t* input, const int32_t* prepared, uintptr_t* taps,
                      int8_t* output, ChannelSum channel_sum) {
  const int32_t channels = p.in_c;
  const Requant r{nullptr, p.out.output_offset, p.out.act_min, p.out.act_max};  // words: each channel's own
  const auto* zero_points = reinterpret_cast<const int8_t*>(prepared + channels * scalar_dw_channel_words(p));
  detail::for_each_output_pixel(p.out_h, p.out_w, input, output, [&](int32_t oy, int32_t ox) {
    const int32_t iy0 = oy * p.stride_h - p.pad_top, ix0 = ox * p.stride_w - p.pad_left;
    int8_t* out = output + (oy * p.out_w + ox) * channels;
    uintptr_t* tap = taps;
    for (int32_t ky = 0; ky < p.k_h; ++ky) {
      const int32_t iy = iy0 + ky * p.dil_h;
      for (int32_t kx = 0; kx < p.k_w; ++kx) {
        const int32_t ix = ix0 + kx * p.dil_w;
        const bool inside = iy >= 0 && iy < p.in_h && ix >= 0 && ix < p.in_w;
        const int8_t* x = inside ? input + (iy * p.in_w + ix) * channels : zero_points;
        *tap++ = reinterpret_cast<uintptr_t>(x) - reinterpret_cast<uintptr_t>(out);
      }
    }
    const int32_t* w = prepared;
    for (const int8_t* const end = out + channels; out != end;) requantize_store(channel_sum(taps, out, w), w, out, r);
  });
}

}  // namespace mcuflow::kernels::scalar
