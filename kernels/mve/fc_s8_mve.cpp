// Fully connected, int8, MVE: the GEMM of kernels_mve.h against the reference weights, two rows
// (interleaved in the scratch) by four output channels at a time, one row by four for a single
// or last odd row (mve::gemm_rows); per-tensor requantization arrives expanded to one entry per channel.
#include "mve_blocks.h"

namespace mcuflow::kernels {

void fc_s8_mve(const FcParams& p, const int8_t* input, const int8_t* weights, const uint8_t* prepared, int8_t* scratch,
               int8_t* output) {
  mve::gemm_rows({p.in_c, p.out_c, weights, prepared, p.out.output_offset, p.out.act_min, p.out.act_max}, input, p.rows,
                 scratch, output, p.out_c);
}

}  // namespace mcuflow::kernels
