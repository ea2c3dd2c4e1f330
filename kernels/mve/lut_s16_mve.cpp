// Table-lookup activation, int16, MVE: four inputs per step widened to int32 lanes, both
// neighbouring entries of the reference's 513-entry table gathered and blended (lut_s16.h).
#include "mve_blocks.h"

namespace mcuflow::kernels {

void lut_s16_mve(const LutParams& p, const int16_t* input, const int16_t* table, int16_t* output) {
  for (int32_t i = 0; i < p.n; i += 4) {
    const mve_pred16_t lanes = vctp32q(uint32_t(p.n - i));
    const int32x4_t x = vldrhq_z_s32(input + i, lanes);
    const uint32x4_t u = vreinterpretq_u32_s32(vaddq_n_s32(x, kLutS16InputOffset));
    vstrhq_p_s32(output + i, mve::lut_s16_at(table, u, lanes), lanes);
  }
}

}  // namespace mcuflow::kernels
