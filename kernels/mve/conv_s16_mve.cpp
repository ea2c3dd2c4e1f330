// 2-D convolution (groups 1), int16 activations and int8 weights, MVE: each output pixel's
// window gathered into a stack row in OHWI tap order (padding taps zero: the input zero point
// is 0), then that row against four weight rows per VMLADAV step (mve_s16_blocks.h).
#include "mve_s16_blocks.h"

namespace mcuflow::kernels {

void conv_s16_mve(const ConvParams& p, const int16_t* input, const int8_t* weights, const int64_t* bias,
                  const int32_t* multipliers, const int32_t* shifts, int16_t* output) {
  const int32_t depth = p.k_h * p.k_w * p.in_c;  // at most kMveS16ConvMaxDepth (conv_s16_mve_refusal)
  int16_t window[kMveS16ConvMaxDepth];
  const mve::S16Gemm gemm(weights, bias, multipliers, shifts, depth, p.out_c, true, p.out);
  for (int32_t oy = 0; oy < p.out_h; ++oy) {
    const int32_t iy0 = oy * p.stride_h - p.pad_top;
    for (int32_t ox = 0; ox < p.out_w; ++ox, output += p.out_c) {
      const int32_t ix0 = ox * p.stride_w - p.pad_left;
      int16_t* tap = window;
      for (int32_t ky = 0; ky < p.k_h; ++ky) {
        const int32_t iy = iy0 + ky * p.dil_h;
        for (int32_t kx = 0; kx < p.k_w; ++kx, tap += p.in_c) {
          const int32_t ix = ix0 + kx * p.dil_w;
          const bool inside = iy >= 0 && iy < p.in_h && ix >= 0 && ix < p.in_w;
          const int16_t* pixel = input + (iy * p.in_w + ix) * p.in_c;
          for (int32_t c = 0; c < p.in_c; ++c) tap[c] = inside ? pixel[c] : int16_t{0};
        }
      }
      gemm.row(window, output);
    }
  }
}

}  // namespace mcuflow::kernels
