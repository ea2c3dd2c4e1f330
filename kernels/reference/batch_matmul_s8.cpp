// Batched matrix product of two int8 activations (TFLite int8 batch-matmul semantics): the
// offset operands are multiplied and accumulated in int32, then requantized once.
#include "mcuflow/kernels/arith.h"
#include "mcuflow/kernels/kernels.h"

namespace mcuflow::kernels {

void batch_matmul_s8(const BatchMatmulParams& p, const int8_t* lhs, const int8_t* rhs, int8_t* output) {
  // rhs element (k, n) of a batch sits at k * k_stride + n * n_stride.
  const int32_t k_stride = p.rhs_transposed ? 1 : p.n, n_stride = p.rhs_transposed ? p.k : 1;
  for (int32_t b = 0; b < p.batch; ++b) {
    const int8_t* l = lhs + b * p.m * p.k;
    const int8_t* r = rhs + b * p.k * p.n;
    for (int32_t m = 0; m < p.m; ++m) {
      for (int32_t n = 0; n < p.n; ++n) {
        int32_t acc = 0;
        for (int32_t k = 0; k < p.k; ++k) {
          acc += (l[m * p.k + k] + p.lhs_offset) * (r[k * k_stride + n * n_stride] + p.rhs_offset);
        }
        const int32_t out = multiply_by_quantized_multiplier(acc, p.multiplier, p.shift) + p.output_offset;
        *output++ = static_cast<int8_t>(clamp_i32(out, p.act_min, p.act_max));
      }
    }
  }
}

}  // namespace mcuflow::kernels
