// Fully connected, float32, MVE: four output channels per vector, bit for bit fc_f32. Each lane
// sums its channel's products in the reference's order with separate VMUL and VADD. Operands in
// whose range MVE's flush-to-zero could change a result run the reference instead
// (f32_mve_blocks.h).
#include "f32_mve_blocks.h"
#include "mcuflow/kernels/kernels.h"

namespace mcuflow::kernels {

void fc_f32_mve(const FcParams& p, const float* input, const float* weights, const float* bias, float* output) {
  if (!mve_f32::operands_exact(input, p.rows * p.in_c, weights, p.out_c * p.in_c, bias, p.out_c, p.in_c, p.act_min_f,
                               p.act_max_f)) {
    fc_f32(p, input, weights, bias, output);
    return;
  }
  for (int32_t r = 0; r < p.rows; ++r, output += p.out_c) {
    const float* in = input + r * p.in_c;
    mve_f32::all_output_channels(p.out_c, p.in_c, weights, bias, p.act_min_f, p.act_max_f, output,
                                 [&](auto run) { run(in, 0, p.in_c); });
  }
}

}  // namespace mcuflow::kernels
