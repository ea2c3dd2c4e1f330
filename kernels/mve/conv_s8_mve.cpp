// Convolution, int8, MVE, any window, grouped or not: each output pixel's window is gathered
// into an im2col row (every group's window, group after group; two rows in the scratch), and
// per group the GEMM of kernels_mve.h multiplies the pair's windows, interleaved, with the
// group's reference weights. Both rows are gathered before any output of the pair is written,
// as the forward walk requires. Padding taps are filled with the input zero point: with the
// input offset folded into the bias they contribute nothing, as in the reference.
#include "mve_blocks.h"

namespace mcuflow::kernels {
namespace {

// row[(g * k_h * k_w + ky * k_w + kx) * channels + c] = input[iy][ix][g * channels + c] of output
// pixel (oy, ox), or the zero point; channels = in_c / groups. kGrouped false: groups is 1, and
// the compiler sees it (an ungrouped conv's walk stays as tight as it was before groups).
template <bool kGrouped>
void im2col_row(const ConvParams& p, const int8_t* input, int32_t oy, int32_t ox, int8x16_t zero_point, int8_t* row) {
  // Locals, not p's fields: the copies' memory clobbers would make the compiler reload those.
  const int32_t in_h = p.in_h, in_w = p.in_w, in_c = p.in_c, k_h = p.k_h, k_w = p.k_w, dil_h = p.dil_h,
                dil_w = p.dil_w, groups = kGrouped ? p.groups : 1, channels = in_c / groups;
  const int32_t iy0 = oy * p.stride_h - p.pad_top, ix0 = ox * p.stride_w - p.pad_left;
  const int32_t taps_row = k_w * channels;
  // Ungrouped with dilation 1, the taps kx in [lo, hi) inside the input are one contiguous input run.
  const bool runs = dil_w == 1 && !kGrouped;
  const int32_t lo = ix0 >= 0 ? 0 : (-ix0 < k_w ? -ix0 : k_w);
  int32_t hi = in_w - ix0 < k_w ? in_w - ix0 : k_w;
  if (hi < lo) hi = lo;
  const bool row_padded = lo > 0 || hi < k_w;
  for (int32_t g = 0; g < groups; ++g, input += channels) {
    for (int32_t ky = 0; ky < k_h; ++ky, row += taps_row) {
      const int32_t iy = iy0 + ky * dil_h;
      if (iy < 0 || iy >= in_h) {
        mve::fill_bytes(row, zero_point, taps_row);
      } else if (runs) {
        if (row_padded) mve::fill_bytes(row, zero_point, taps_row);
        mve::copy_bytes(row + lo * in_c, input + (iy * in_w + ix0 + lo) * in_c, (hi - lo) * in_c);
      } else {
        for (int32_t kx = 0; kx < k_w; ++kx) {
          const int32_t ix = ix0 + kx * dil_w;
          if (ix < 0 || ix >= in_w) mve::fill_bytes(row + kx * channels, zero_point, channels);
          else mve::copy_bytes(row + kx * channels, input + (iy * in_w + ix) * in_c, channels);
        }
      }
    }
  }
}

template <bool kGrouped>
void conv(const ConvParams& p, const int8_t* input, const int8_t* weights, const uint8_t* prepared, int8_t* scratch,
          int8_t* output) {
  const MveGemmLayout layout = mve_conv_gemm_layout(p);
  const int32_t groups = kGrouped ? p.groups : 1;
  const int32_t depth = layout.depth, window = depth * groups, group_out = p.out_c / groups;
  const int32_t group_tables = layout.group_blocks() * layout.block_bytes();
  // Group g's GEMM: its weights and its blocks of the prepared input. Whether any channel shifts
  // left is scanned once, over every group's blocks.
  mve::GemmArgs g{depth, group_out, weights, prepared, p.out.output_offset, p.out.act_min, p.out.act_max};
  if (p.out_h * p.out_w > 1) {
    mve::GemmArgs all = g;
    all.out_c = layout.blocks() * kMveGemmBlock;
    g.left_shifts = mve::gemm_left_shifts(all);  // scanned only where rows pair up
  }
  auto group = [&](int32_t k) -> const mve::GemmArgs& {
    if (kGrouped) g.weights = weights + k * group_out * depth, g.tables = prepared + k * group_tables;
    return g;
  };
  const int8x16_t zero_point = vdupq_n_s8(int8_t(-p.input_offset));
  int8_t* row0 = scratch;  // mve_conv_scratch_bytes: two im2col rows, then the pair
  int8_t* row1 = scratch + window;
  int8_t* pair = scratch + 2 * window;
  const int32_t pixels = p.out_h * p.out_w;
  int32_t oy = 0, ox = 0;  // of pixel i
  for (int32_t i = 0; i < pixels; i += 2) {
    im2col_row<kGrouped>(p, input, oy, ox, zero_point, row0);
    if (++ox == p.out_w) ox = 0, ++oy;
    int8_t* out0 = output + i * p.out_c;
    if (i + 1 == pixels) {
      for (int32_t k = 0; k < groups; ++k) mve::gemm_one_row(group(k), row0 + k * depth, out0 + k * group_out);
      break;
    }
    im2col_row<kGrouped>(p, input, oy, ox, zero_point, row1);
    if (++ox == p.out_w) ox = 0, ++oy;
    for (int32_t k = 0; k < groups; ++k) {
      mve::interleave_rows(pair, row0 + k * depth, row1 + k * depth, depth);
      mve::gemm_two_rows(group(k), pair, out0 + k * group_out, out0 + p.out_c + k * group_out);
    }
  }
}

}  // namespace

void conv_s8_mve(const ConvParams& p, const int8_t* input, const int8_t* weights, const uint8_t* prepared,
                 int8_t* scratch, int8_t* output) {
  if (p.groups == 1) conv<false>(p, input, weights, prepared, scratch, output);
  else conv<true>(p, input, weights, prepared, scratch, output);
}

}  // namespace mcuflow::kernels
