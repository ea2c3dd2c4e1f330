// Clamp (ReLU, ReLU6, hardtanh...) in the int8 domain; elementwise, so in place is fine.
#include "mcuflow/kernels/arith.h"
#include "mcuflow/kernels/kernels.h"

namespace mcuflow::kernels {

void clamp_s8(const ClampParams& p, const int8_t* input, int8_t* output) {
  for (int32_t i = 0; i < p.n; ++i) {
    output[i] = static_cast<int8_t>(clamp_i32(input[i], p.act_min, p.act_max));
  }
}

}  // namespace mcuflow::kernels
