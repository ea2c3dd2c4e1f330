// Fully connected, int8 activations and packed int4 weights, MVE: per block of output channels
// (mve_fc_w4_block), their weights unpacked and channel tables built in the scratch, then
// fc_s8_mve's rows (mve::gemm_rows) on them (kernels_mve.h).
#include "mve_blocks.h"

namespace mcuflow::kernels {

void fc_s8_w4_mve(const FcParams& p, const int8_t* input, const uint8_t* weights, const int32_t* bias,
                  const int32_t* multipliers, const int32_t* shifts, int8_t* scratch, int8_t* output) {
  const int32_t block = mve_fc_w4_block(p), step = p.per_channel ? 1 : 0;
  for (int32_t oc = 0; oc < p.out_c; oc += block) {
    const MveGemmLayout layout{p.in_c, p.out_c - oc < block ? p.out_c - oc : block};
    // block is a multiple of kMveGemmBlock: the block's first weight starts a byte
    const mve::W4Inputs w = mve::build_w4_inputs(layout, layout.depth * layout.out_c, weights + oc * p.in_c / 2,
                                                 bias + oc, multipliers + oc * step, shifts + oc * step,
                                                 p.per_channel == 1, p.input_offset, scratch);
    mve::gemm_rows({p.in_c, layout.out_c, w.weights, w.prepared, p.out.output_offset, p.out.act_min, p.out.act_max},
                   input, p.rows, w.rest, output + oc, p.out_c);
  }
}

}  // namespace mcuflow::kernels
