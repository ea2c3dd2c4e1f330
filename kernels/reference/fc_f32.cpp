// Fully connected, float32: out[r][o] = sum_i in[r][i] * W[o][i] + b[o].
#include "mcuflow/kernels/kernels.h"

namespace mcuflow::kernels {

void fc_f32(const FcParams& p, const float* input, const float* weights, const float* bias, float* output) {
  for (int32_t r = 0; r < p.rows; ++r) {
    const float* in = input + r * p.in_c;
    for (int32_t oc = 0; oc < p.out_c; ++oc) {
      const float* w = weights + oc * p.in_c;
      float acc = 0.0f;
      for (int32_t ic = 0; ic < p.in_c; ++ic) acc += in[ic] * w[ic];
      if (bias) acc += bias[oc];
      acc = acc < p.act_min_f ? p.act_min_f : acc;
      *output++ = acc > p.act_max_f ? p.act_max_f : acc;
    }
  }
}

}  // namespace mcuflow::kernels
