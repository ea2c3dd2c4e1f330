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
  // The window's geometry in locals the lambda copies: kept in registers across the copies'
  // assembly (whose memory clobber would reload a struct's fields).
  const int32_t k_h = p.k_h, k_w = p.k_w, in_c = p.in_c, in_h = p.in_h, in_w = p.in_w, dil_h = p.dil_h,
                dil_w = p.dil_w, out_w = p.out_w, stride_h = p.stride_h, stride_w = p.stride_w, pad_top = p.pad_top,
                pad_left = p.pad_left, row_values = k_w * in_c, run_step = dil_w * in_c;
  int16_t* const rows_at = window;
  auto window_of = [=](int32_t pixel) {
    const int32_t iy0 = pixel / out_w * stride_h - pad_top, ix0 = pixel % out_w * stride_w - pad_left;
    const detail::TapRange rows = detail::valid_taps(iy0, k_h, dil_h, in_h);
    const detail::TapRange cols = detail::valid_taps(ix0, k_w, dil_w, in_w);
    // Each valid row: zeros before its valid taps, the taps, zeros after (the same for every row).
    const int32_t before = cols.begin * in_c, valid = (cols.end - cols.begin) * in_c, after = row_values - before - valid;
    const int32_t row_step = dil_h * in_w * in_c;
    const int16_t* in = input + ((iy0 + rows.begin * dil_h) * in_w + ix0 + cols.begin * dil_w) * in_c;
    mve::fill_zero_s16(rows_at, rows.begin * row_values);
    int16_t* tap = rows_at + rows.begin * row_values;
    for (int32_t ky = rows.begin; ky < rows.end; ++ky, tap += row_values, in += row_step) {
      mve::fill_zero_s16(tap, before);
      if (dil_w == 1) {  // the row's valid taps are one run of pixels
        mve::copy_bytes(reinterpret_cast<int8_t*>(tap + before), reinterpret_cast<const int8_t*>(in), 2 * valid);
      } else {
        const int16_t* from = in;
        for (int32_t kx = cols.begin; kx < cols.end; ++kx, from += run_step)
          mve::copy_bytes(reinterpret_cast<int8_t*>(tap + kx * in_c), reinterpret_cast<const int8_t*>(from), 2 * in_c);
      }
      mve::fill_zero_s16(tap + before + valid, after);
    }
    mve::fill_zero_s16(tap, (k_h - rows.end) * row_values);
    return static_cast<const int16_t*>(rows_at);
  };
  gemm.run(p.out_h * p.out_w, window_of, output);
}

}  // namespace mcuflow::kernels
