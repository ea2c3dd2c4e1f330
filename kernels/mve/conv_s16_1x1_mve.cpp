// Pointwise (1x1) convolution, int16 activations and int8 weights, MVE: each output pixel's
// input pixel against four weight rows per VMLADAV step (mve_s16_blocks.h: int32 where
// provably exact, else int64). The output never overlaps the input (the reference's contract).
#include "mve_s16_blocks.h"

namespace mcuflow::kernels {

void conv_s16_1x1_mve(const ConvParams& p, const int16_t* input, const int8_t* weights, const int64_t* bias,
                      const int32_t* multipliers, const int32_t* shifts, int16_t* output) {
  const mve::S16Gemm gemm(weights, bias, multipliers, shifts, p.in_c, p.out_c, true, p.out);
  const int32_t out_w = p.out_w, row_step = p.stride_h * p.in_w * p.in_c, pixel_step = p.stride_w * p.in_c;
  // Output pixel q reads input pixel (q / out_w * stride_h, q % out_w * stride_w).
  gemm.run(p.out_h * out_w, [&](int32_t q) { return input + q / out_w * row_step + q % out_w * pixel_step; },
           output);
}

}  // namespace mcuflow::kernels
