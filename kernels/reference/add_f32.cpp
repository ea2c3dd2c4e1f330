// Element-wise add, float32, with input2 broadcast by in2_mode (see BinaryParams).
#include "mcuflow/kernels/kernels.h"

namespace mcuflow::kernels {

void add_f32(const BinaryParams& p, const float* input1, const float* input2, float* output) {
  for (int32_t o = 0; o < p.outer; ++o) {
    for (int32_t i = 0; i < p.inner; ++i) {
      const int32_t n = o * p.inner + i;
      const int32_t n2 = p.in2_mode == 0 ? n : (p.in2_mode == 1 ? i : 0);
      float v = input1[n] + input2[n2];
      v = v < p.act_min_f ? p.act_min_f : v;
      output[n] = v > p.act_max_f ? p.act_max_f : v;
    }
  }
}

}  // namespace mcuflow::kernels
