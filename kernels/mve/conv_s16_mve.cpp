// 2-D convolution (groups 1), int16 activations and int8 weights, MVE: each output pixel's
// window gathered into a stack row in OHWI tap order, a row's valid taps copied eight values
// per step (padding taps zero: the input zero point is 0), then that row against four weight rows per VMLADAV step (mve_s16_blocks.h).
#include "mve_s16_blocks.h"

namespace mcuflow::kernels {

void conv_s16_mve(const ConvParams& p, const int16_t* input, const int8_t* weights, const int64_t* bias,
                  const int32_t* multipliers, const int32_t* shifts, int16_t* output) {
  const int32_t depth = p.k_h * p.k_w * p.in_c;  // at most kMveS16ConvMaxDepth (conv_s16_mve_refusal)
  int16_t window[kMveS16ConvMaxDepth];
  const mve::S16Gemm gemm(weights, bias, multipliers, shifts, depth, p.out_c, true, p.out);
  const ConvParams q = p;  // a copy the compiler may keep in registers across the window's stores
  const int32_t run_step = q.dil_w * q.in_c;
  auto window_of = [&](int32_t pixel) {
    const int32_t iy0 = pixel / q.out_w * q.stride_h - q.pad_top, ix0 = pixel % q.out_w * q.stride_w - q.pad_left;
    const detail::TapRange rows = detail::valid_taps(iy0, q.k_h, q.dil_h, q.in_h);
    const detail::TapRange cols = detail::valid_taps(ix0, q.k_w, q.dil_w, q.in_w);
    int16_t* tap = window;
    for (int32_t ky = 0; ky < q.k_h; ++ky, tap += q.k_w * q.in_c) {
      if (ky < rows.begin || ky >= rows.end) {
        mve::fill_zero_s16(tap, q.k_w * q.in_c);
        continue;
      }
      mve::fill_zero_s16(tap, cols.begin * q.in_c);
      const int16_t* in = input + ((iy0 + ky * q.dil_h) * q.in_w + ix0 + cols.begin * q.dil_w) * q.in_c;
      if (q.dil_w == 1) {  // the row's valid taps are one run of pixels
        mve::copy_s16(tap + cols.begin * q.in_c, in, (cols.end - cols.begin) * q.in_c);
      } else {
        for (int32_t kx = cols.begin; kx < cols.end; ++kx, in += run_step) mve::copy_s16(tap + kx * q.in_c, in, q.in_c);
      }
      mve::fill_zero_s16(tap + cols.end * q.in_c, (q.k_w - cols.end) * q.in_c);
    }
    return static_cast<const int16_t*>(window);
  };
  gemm.run(p.out_h * p.out_w, window_of, output);
}

}  // namespace mcuflow::kernels
