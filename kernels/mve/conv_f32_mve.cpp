// 2-D convolution, float32, MVE: four output channels per vector, bit for bit conv_f32 (any
// kernel size, stride, dilation and padding; one group: the check refuses more). Each lane sums its channel's products
// in the reference's order (valid taps row by row, input channels within a tap) with separate
// VMUL and VADD; every output pixel's channels are written after that pixel's window is read,
// pixels forwards, as the reference does. Operands in whose range MVE's flush-to-zero could
// change a result run the reference instead (f32_mve_blocks.h).
#include "../reference/window.h"
#include "f32_mve_blocks.h"
#include "mcuflow/kernels/kernels.h"

namespace mcuflow::kernels {

void conv_f32_mve(const ConvParams& p, const float* input, const float* weights, const float* bias, float* output) {
  const int32_t depth = p.k_h * p.k_w * p.in_c;
  const mve_f32::MagnitudeRange x = mve_f32::magnitude_range(input, p.in_h * p.in_w * p.in_c),
                                w = mve_f32::magnitude_range(weights, p.out_c * depth),
                                b = bias ? mve_f32::magnitude_range(bias, p.out_c) : mve_f32::MagnitudeRange{0, 0, false};
  if (!mve_f32::exact_in_mve_lanes(x, w, b, depth, p.act_min_f, p.act_max_f)) {
    conv_f32(p, input, weights, bias, output);
    return;
  }
  for (int32_t oy = 0; oy < p.out_h; ++oy) {
    const int32_t iy0 = oy * p.stride_h - p.pad_top;
    const detail::TapRange rows = detail::valid_taps(iy0, p.k_h, p.dil_h, p.in_h);
    for (int32_t ox = 0; ox < p.out_w; ++ox, output += p.out_c) {
      const int32_t ix0 = ox * p.stride_w - p.pad_left;
      const detail::TapRange cols = detail::valid_taps(ix0, p.k_w, p.dil_w, p.in_w);
      mve_f32::all_output_channels(p.out_c, depth, weights, bias, p.act_min_f, p.act_max_f, output, [&](auto run) {
        for (int32_t ky = rows.begin; ky < rows.end; ++ky) {
          const float* in_row = input + ((iy0 + ky * p.dil_h) * p.in_w + ix0) * p.in_c;
          for (int32_t kx = cols.begin; kx < cols.end; ++kx)
            run(in_row + kx * p.dil_w * p.in_c, (ky * p.k_w + kx) * p.in_c, p.in_c);
        }
      });
    }
  }
}

}  // namespace mcuflow::kernels
