// 2-D convolution, float32, MVE: four output channels per vector, bit for bit conv_f32 (any
// kernel size, stride, dilation and padding; one group: the check refuses more). Each lane sums its channel's products
// in the reference's order (valid taps row by row, input channels within a tap) with separate
// VMUL and VADD; every output pixel's channels are written after that pixel's window is read,
// pixels forwards, as the reference does. Operands in whose range MVE's flush-to-zero could
// change a result run the reference instead (f32_mve_blocks.h).
#include "f32_mve_blocks.h"
#include "mcuflow/kernels/kernels.h"

namespace mcuflow::kernels {

void conv_f32_mve(const ConvParams& p, const float* input, const float* weights, const float* bias, float* output) {
  const int32_t depth = p.k_h * p.k_w * p.in_c;
  if (!mve_f32::operands_exact(input, p.in_h * p.in_w * p.in_c, weights, p.out_c * depth, bias, p.out_c, depth,
                               p.act_min_f, p.act_max_f)) {
    conv_f32(p, input, weights, bias, output);
    return;
  }
  mve_f32::for_each_output_pixel(p, output, [&](int32_t iy0, int32_t ix0, detail::TapRange rows, detail::TapRange cols,
                                                float* out) {
    mve_f32::all_output_channels(p.out_c, depth, weights, bias, p.act_min_f, p.act_max_f, out, [&](auto run) {
      detail::for_each_window_run(p, input, iy0, ix0, rows, cols, run);
    });
  });
}

}  // namespace mcuflow::kernels
