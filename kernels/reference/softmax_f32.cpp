// Softmax over the last axis, float32 (beta 1). Subtracting the row maximum keeps exp() in
// (0, 1] so nothing overflows.
#include <cmath>

#include "mcuflow/kernels/kernels.h"

namespace mcuflow::kernels {

void softmax_f32(const SoftmaxParams& p, const float* input, float* output) {
  for (int32_t r = 0; r < p.rows; ++r) {
    const float* in = input + r * p.depth;
    float* out = output + r * p.depth;
    float max_v = in[0];
    for (int32_t i = 1; i < p.depth; ++i) max_v = in[i] > max_v ? in[i] : max_v;
    float sum = 0.0f;
    for (int32_t i = 0; i < p.depth; ++i) {
      out[i] = std::exp(in[i] - max_v);
      sum += out[i];
    }
    const float inv = 1.0f / sum;
    for (int32_t i = 0; i < p.depth; ++i) out[i] *= inv;
  }
}

}  // namespace mcuflow::kernels
