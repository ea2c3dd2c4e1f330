// Fully connected, int8, MVE: the GEMM of kernels_mve.h against the reference weights, two rows
// (interleaved in the scratch) by four output channels at a time, one row by four for a single
// or last odd row; per-tensor requantization arrives expanded to one entry per channel.
#include "mve_blocks.h"

namespace mcuflow::kernels {

void fc_s8_mve(const FcParams& p, const int8_t* input, const int8_t* weights, const uint8_t* prepared, int8_t* scratch,
               int8_t* output) {
  mve::GemmArgs g{p.in_c, p.out_c, weights, prepared, p.out.output_offset, p.out.act_min, p.out.act_max};
  if (p.rows > 1) g.left_shifts = mve::gemm_left_shifts(g);  // scanned only where rows pair up
  int32_t r = 0;
  for (; r + 1 < p.rows; r += 2) {
    mve::interleave_rows(scratch, input + r * p.in_c, input + (r + 1) * p.in_c, p.in_c);
    mve::gemm_two_rows(g, scratch, output + r * p.out_c, output + (r + 1) * p.out_c);
  }
  if (r < p.rows) mve::gemm_one_row(g, input + r * p.in_c, output + r * p.out_c);
}

}  // namespace mcuflow::kernels
