// Fully connected, int8, MVE: the GEMM of kernels_mve.h, two rows by four output channels at a
// time and one row by eight for a single row; per-tensor requantization arrives expanded to
// one entry per channel.
#include "mcuflow/kernels/kernels_mve.h"

namespace mcuflow::kernels {

void fc_s8_mve(const FcParams& p, const int8_t* input, const uint8_t* prepared, int8_t* output) {
  const mve::GemmArgs g{p.in_c, p.out_c, prepared, p.output_offset, p.act_min, p.act_max};
  int32_t r = 0;
  for (; r + 1 < p.rows; r += 2) {
    mve::gemm_two_rows(g, input + r * p.in_c, input + (r + 1) * p.in_c, output + r * p.out_c,
                       output + (r + 1) * p.out_c);
  }
  if (r < p.rows) mve::gemm_one_row(g, input + r * p.in_c, output + r * p.out_c);
}

}  // namespace mcuflow::kernels
