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
      for (int32_t ky = rows.begin; ky < rows.end; ++ky) {
        const float* in_row = input + ((iy0 + ky * p.dil_h) * p.in_w + ix0) * p.in_c;
        if (p.dil_w == 1) {  // the row's valid taps are adjacent in the input and the weights: one run
          run(in_row + cols.begin * p.in_c, (ky * p.k_w + cols.begin) * p.in_c, (cols.end - cols.begin) * p.in_c);
          continue;
        }
        for (int32_t kx = cols.begin; kx < cols.end; ++kx)
          run(in_row + kx * p.dil_w * p.in_c, (ky * p.k_w + kx) * p.in_c, p.in_c);
      }
    });
  });
}

}  // namespace mcuflow::kernels
