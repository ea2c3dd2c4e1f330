// Clamp, int8, MVE: VMAX/VMIN on sixteen lanes per step of a tail-predicated loop. Each step
// reads its sixteen inputs before writing them, so it runs in place.
#include "mve_blocks.h"

namespace mcuflow::kernels {

void clamp_s8_mve(const ClampParams& p, const int8_t* input, int8_t* output) {
  const int8x16_t act_min = vdupq_n_s8(int8_t(p.act_min)), act_max = vdupq_n_s8(int8_t(p.act_max));
  for (int32_t i = 0; i < p.n; i += kMveChunk) {
    const mve_pred16_t valid = vctp8q(uint32_t(p.n - i));
    const int8x16_t x = vldrbq_z_s8(input + i, valid);
    vstrbq_p_s8(output + i, vminq_s8(vmaxq_s8(x, act_min), act_max), valid);
  }
}

}  // namespace mcuflow::kernels
