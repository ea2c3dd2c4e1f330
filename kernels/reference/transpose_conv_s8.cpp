// Transposed 2-D convolution, int8 (per-channel weights, TFLite int8 transpose-conv
// semantics). Weights OHWI [out_c][k_h][k_w][in_c]. Input pixel (iy, ix) with tap (ky, kx)
// lands on output (iy * stride_h - pad_top + ky * dil_h, ...); each output gathers the taps
// that land on it, so the output is written once, in order.
#include "mcuflow/kernels/arith.h"
#include "mcuflow/kernels/kernels.h"

namespace mcuflow::kernels {

void transpose_conv_s8(const ConvParams& p, const int8_t* input, const int8_t* weights, const int32_t* bias,
                       const int32_t* multipliers, const int32_t* shifts, int8_t* output) {
  for (int32_t oy = 0; oy < p.out_h; ++oy) {
    for (int32_t ox = 0; ox < p.out_w; ++ox) {
      for (int32_t oc = 0; oc < p.out_c; ++oc) {
        int32_t acc = 0;
        for (int32_t ky = 0; ky < p.k_h; ++ky) {
          const int32_t ty = oy + p.pad_top - ky * p.dil_h;  // = iy * stride_h for a landing tap
          if (ty < 0 || ty % p.stride_h != 0 || ty / p.stride_h >= p.in_h) continue;
          for (int32_t kx = 0; kx < p.k_w; ++kx) {
            const int32_t tx = ox + p.pad_left - kx * p.dil_w;
            if (tx < 0 || tx % p.stride_w != 0 || tx / p.stride_w >= p.in_w) continue;
            const int8_t* in = input + ((ty / p.stride_h) * p.in_w + tx / p.stride_w) * p.in_c;
            const int8_t* w = weights + ((oc * p.k_h + ky) * p.k_w + kx) * p.in_c;
            for (int32_t ic = 0; ic < p.in_c; ++ic) acc += (in[ic] + p.input_offset) * w[ic];
          }
        }
        acc += bias[oc];
        acc = multiply_by_quantized_multiplier(acc, multipliers[oc], shifts[oc]) + p.out.output_offset;
        *output++ = static_cast<int8_t>(clamp_i32(acc, p.out.act_min, p.out.act_max));
      }
    }
  }
}

}  // namespace mcuflow::kernels
