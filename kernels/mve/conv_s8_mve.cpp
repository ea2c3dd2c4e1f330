// Convolution, int8, MVE, any window: each output pixel's window is gathered into an im2col
// row (two rows in the scratch, then interleaved), and the GEMM of kernels_mve.h multiplies
// the pair with the reference weights. Padding taps are filled with the input zero point: with the input offset
// folded into the bias they contribute nothing, as in the reference.
#include "mve_blocks.h"

namespace mcuflow::kernels {
namespace {

// row[(ky * k_w + kx) * in_c + ic] = input[iy][ix][ic] of output pixel (oy, ox), or the zero point.
void im2col_row(const ConvParams& p, const int8_t* input, int32_t oy, int32_t ox, int8x16_t zero_point, int8_t* row) {
  // Locals, not p's fields: the copies' memory clobbers would make the compiler reload those.
  const int32_t in_h = p.in_h, in_w = p.in_w, in_c = p.in_c, k_h = p.k_h, k_w = p.k_w, dil_h = p.dil_h,
                dil_w = p.dil_w;
  const int32_t iy0 = oy * p.stride_h - p.pad_top, ix0 = ox * p.stride_w - p.pad_left;
  const int32_t taps_row = k_w * in_c;
  // With dilation 1 the taps kx in [lo, hi) inside the input are one contiguous input run.
  const int32_t lo = ix0 >= 0 ? 0 : (-ix0 < k_w ? -ix0 : k_w);
  int32_t hi = in_w - ix0 < k_w ? in_w - ix0 : k_w;
  if (hi < lo) hi = lo;
  const bool row_padded = lo > 0 || hi < k_w;
  for (int32_t ky = 0; ky < k_h; ++ky, row += taps_row) {
    const int32_t iy = iy0 + ky * dil_h;
    if (iy < 0 || iy >= in_h) {
      mve::fill_bytes(row, zero_point, taps_row);
    } else if (dil_w == 1) {
      if (row_padded) mve::fill_bytes(row, zero_point, taps_row);
      mve::copy_bytes(row + lo * in_c, input + (iy * in_w + ix0 + lo) * in_c, (hi - lo) * in_c);
    } else {
      for (int32_t kx = 0; kx < k_w; ++kx) {
        const int32_t ix = ix0 + kx * dil_w;
        if (ix < 0 || ix >= in_w) mve::fill_bytes(row + kx * in_c, zero_point, in_c);
        else mve::copy_bytes(row + kx * in_c, input + (iy * in_w + ix) * in_c, in_c);
      }
    }
  }
}

}  // namespace

void conv_s8_mve(const ConvParams& p, const int8_t* input, const int8_t* weights, const uint8_t* prepared,
                 int8_t* scratch, int8_t* output) {
  const int32_t depth = p.k_h * p.k_w * p.in_c;
  mve::GemmArgs g{depth, p.out_c, weights, prepared, p.output_offset, p.act_min, p.act_max};
  if (p.out_h * p.out_w > 1) g.left_shifts = mve::gemm_left_shifts(g);  // scanned only where rows pair up
  const int8x16_t zero_point = vdupq_n_s8(int8_t(-p.input_offset));
  int8_t* row0 = scratch;  // mve_conv_scratch_bytes: two im2col rows, then the pair
  int8_t* row1 = scratch + depth;
  int8_t* pair = scratch + 2 * depth;
  const int32_t pixels = p.out_h * p.out_w;
  int32_t oy = 0, ox = 0;  // of pixel i
  for (int32_t i = 0; i < pixels; i += 2) {
    im2col_row(p, input, oy, ox, zero_point, row0);
    if (++ox == p.out_w) ox = 0, ++oy;
    if (i + 1 == pixels) {
      mve::gemm_one_row(g, row0, output + i * p.out_c);
      break;
    }
    im2col_row(p, input, oy, ox, zero_point, row1);
    if (++ox == p.out_w) ox = 0, ++oy;
    mve::interleave_rows(pair, row0, row1, depth);
    mve::gemm_two_rows(g, pair, output + i * p.out_c, output + (i + 1) * p.out_c);
  }
}

}  // namespace mcuflow::kernels
