// Convolution, int8, MVE, any window: each output pixel's window is gathered into an im2col
// row (two rows in the scratch), then the GEMM of kernels_mve.h multiplies the rows with the
// prepared weights. Padding taps are filled with the input zero point: with the input offset
// folded into the bias they contribute nothing, as in the reference.
#include "mcuflow/kernels/kernels_mve.h"

namespace mcuflow::kernels {
namespace {

// row[(ky * k_w + kx) * in_c + ic] = input[iy][ix][ic] of output pixel (oy, ox), or the zero point.
void im2col_row(const ConvParams& p, const int8_t* input, int32_t oy, int32_t ox, int8x16_t zero_point, int8_t* row) {
  const int32_t iy0 = oy * p.stride_h - p.pad_top, ix0 = ox * p.stride_w - p.pad_left;
  const int32_t taps_row = p.k_w * p.in_c;
  for (int32_t ky = 0; ky < p.k_h; ++ky, row += taps_row) {
    const int32_t iy = iy0 + ky * p.dil_h;
    if (iy < 0 || iy >= p.in_h) {
      mve::fill_bytes(row, zero_point, taps_row);
      continue;
    }
    const int8_t* in_row = input + iy * p.in_w * p.in_c;
    if (p.dil_w == 1) {  // the taps inside the input are one contiguous run of the input row
      const int32_t lo = ix0 >= 0 ? 0 : (-ix0 < p.k_w ? -ix0 : p.k_w);
      int32_t hi = p.in_w - ix0 < p.k_w ? p.in_w - ix0 : p.k_w;
      if (hi < lo) hi = lo;
      mve::fill_bytes(row, zero_point, lo * p.in_c);
      mve::copy_bytes(row + lo * p.in_c, in_row + (ix0 + lo) * p.in_c, (hi - lo) * p.in_c);
      mve::fill_bytes(row + hi * p.in_c, zero_point, (p.k_w - hi) * p.in_c);
      continue;
    }
    for (int32_t kx = 0; kx < p.k_w; ++kx) {
      const int32_t ix = ix0 + kx * p.dil_w;
      if (ix < 0 || ix >= p.in_w) mve::fill_bytes(row + kx * p.in_c, zero_point, p.in_c);
      else mve::copy_bytes(row + kx * p.in_c, in_row + ix * p.in_c, p.in_c);
    }
  }
}

}  // namespace

void conv_s8_mve(const ConvParams& p, const int8_t* input, const uint8_t* prepared, int8_t* scratch, int8_t* output) {
  const int32_t depth = p.k_h * p.k_w * p.in_c;
  const mve::GemmArgs g{depth, p.out_c, prepared, p.output_offset, p.act_min, p.act_max};
  const int8x16_t zero_point = vdupq_n_s8(int8_t(-p.input_offset));
  int8_t* row0 = scratch;
  int8_t* row1 = scratch + depth;
  const int32_t pixels = p.out_h * p.out_w;
  int32_t oy = 0, ox = 0;  // of pixel i
  for (int32_t i = 0; i < pixels; i += 2) {
    im2col_row(p, input, oy, ox, zero_point, row0);
    if (++ox == p.out_w) ox = 0, ++oy;
    if (i + 1 == pixels) {
      mve::gemm_two_rows(g, row0, row0, output + i * p.out_c, nullptr);
      break;
    }
    im2col_row(p, input, oy, ox, zero_point, row1);
    if (++ox == p.out_w) ox = 0, ++oy;
    mve::gemm_two_rows(g, row0, row1, output + i * p.out_c, output + (i + 1) * p.out_c);
  }
}

}  // namespace mcuflow::kernels
