// Fully connected, float32, DSP tier on a core with an FPU: bit for bit fc_f32. Two input rows x
// four output channels per pass, VLDM of four inputs or weights, a VMLA.F32 per product, each
// output's products in the reference's order (f32_dsp_blocks.h).
#include "f32_dsp_blocks.h"

namespace mcuflow::kernels {

void fc_f32_dsp(const FcParams& p, const float* input, const float* weights, const float* bias, float* output) {
  dsp_f32::row_pairs(p.rows, p.out_c, p.in_c, weights, bias, p.act_min_f, p.act_max_f, output,
                     [&](int32_t r) { return input + r * p.in_c; });
}

}  // namespace mcuflow::kernels
