// Batched matrix product of two float32 activations.
#include "mcuflow/kernels/kernels.h"

namespace mcuflow::kernels {

void batch_matmul_f32(const BatchMatmulParams& p, const float* lhs, const float* rhs, float* output) {
  const int32_t k_stride = p.rhs_transposed ? 1 : p.n, n_stride = p.rhs_transposed ? p.k : 1;
  for (int32_t b = 0; b < p.batch; ++b) {
    const float* l = lhs + b * p.m * p.k;
    const float* r = rhs + b * p.k * p.n;
    for (int32_t m = 0; m < p.m; ++m) {
      for (int32_t n = 0; n < p.n; ++n) {
        float acc = 0.0f;
        for (int32_t k = 0; k < p.k; ++k) acc += l[m * p.k + k] * r[k * k_stride + n * n_stride];
        acc = acc < p.act_min_f ? p.act_min_f : acc;
        *output++ = acc > p.act_max_f ? p.act_max_f : acc;
      }
    }
  }
}

}  // namespace mcuflow::kernels
