// Fully connected, int16 activations and int8 weights, MVE: each input row against four
// weight rows per VMLADAV step (mve_s16_blocks.h: int32 where provably exact, else int64).
#include "mve_s16_blocks.h"

namespace mcuflow::kernels {

void fc_s16_mve(const FcParams& p, const int16_t* input, const int8_t* weights, const int64_t* bias,
                const int32_t* multipliers, const int32_t* shifts, int16_t* output) {
  const mve::S16Gemm gemm(weights, bias, multipliers, shifts, p.in_c, p.out_c, p.per_channel != 0, p.out);
  const int32_t in_c = p.in_c;
  gemm.run(p.rows, [&](int32_t r) { return input + r * in_c; }, output);
}

}  // namespace mcuflow::kernels
