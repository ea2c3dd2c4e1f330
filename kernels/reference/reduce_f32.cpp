// Sum, mean or max over the middle axis of [outer][reduce][inner], float32.
#include "mcuflow/kernels/kernels.h"

namespace mcuflow::kernels {

void reduce_f32(const ReduceParams& p, const float* input, float* output) {
  for (int32_t o = 0; o < p.outer; ++o) {
    for (int32_t i = 0; i < p.inner; ++i) {
      const float* in = input + o * p.reduce * p.inner + i;
      float acc = in[0];
      for (int32_t r = 1; r < p.reduce; ++r) {
        const float v = in[r * p.inner];
        acc = p.op == kReduceMax ? (v > acc ? v : acc) : acc + v;
      }
      output[o * p.inner + i] = p.op == kReduceMean ? acc / static_cast<float>(p.reduce) : acc;
    }
  }
}

}  // namespace mcuflow::kernels
