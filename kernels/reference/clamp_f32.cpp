// Clamp, float32; elementwise, so in place is fine.
#include "mcuflow/kernels/kernels.h"

namespace mcuflow::kernels {

void clamp_f32(const ClampParams& p, const float* input, float* output) {
  for (int32_t i = 0; i < p.n; ++i) {
    const float v = input[i] < p.act_min_f ? p.act_min_f : input[i];
    output[i] = v > p.act_max_f ? p.act_max_f : v;
  }
}

}  // namespace mcuflow::kernels
