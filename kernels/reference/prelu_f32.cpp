// PReLU, float32: x > 0 ? x : alpha[c] * x, as PyTorch defines it. Element-wise, so in place is fine.
#include "mcuflow/kernels/kernels.h"

namespace mcuflow::kernels {

void prelu_f32(const PreluParams& p, const float* input, const float* alpha, float* output) {
  int32_t i = 0;
  for (int32_t o = 0; o < p.outer; ++o)
    for (int32_t c = 0; c < p.channels; ++c)
      for (int32_t k = 0; k < p.inner; ++k, ++i) output[i] = input[i] > 0.0f ? input[i] : alpha[c] * input[i];
}

}  // namespace mcuflow::kernels
