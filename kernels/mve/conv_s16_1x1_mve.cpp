// Pointwise (1x1) convolution, int16 activations and int8 weights, MVE: each output pixel's
// input pixel against four weight rows per VMLADAV step (mve_s16_blocks.h: int32 where
// provably exact, else int64). The output never overlaps the input (the reference's contract).
#include "mve_s16_blocks.h"

namespace mcuflow::kernels {

void conv_s16_1x1_mve(const ConvParams& p, const int16_t* input, const int8_t* weights, const int64_t* bias,
                      const int32_t* multipliers, const int32_t* shifts, int16_t* output) {
  const mve::S16Gemm gemm(weights, bias, multipliers, shifts, p.in_c, p.out_c, true, p.out);
  for (int32_t oy = 0; oy < p.out_h; ++oy) {
    const int16_t* row = input + oy * p.stride_h * p.in_w * p.in_c;
    for (int32_t ox = 0; ox < p.out_w; ++ox, output += p.out_c) gemm.row(row + ox * p.stride_w * p.in_c, output);
  }
}

}  // namespace mcuflow::kernels
