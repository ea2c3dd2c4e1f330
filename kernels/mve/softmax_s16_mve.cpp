// Softmax, int16, MVE: softmax_s16.h's steps on vectors. The row max by VMAXV over eight lanes;
// then four lanes at a time the exp table's inputs (VMLA, VSHL, VMIN), both neighbouring entries
// gathered and blended (mve::lut_s16_at), the exp values stored to the output and summed by
// VADDVA; then each output e * inv rounded by VRSHL (exact: MVE rounds before the shift
// without overflow) and capped at 32767.
#include "mcuflow/kernels/softmax_s16.h"
#include "mve_blocks.h"

namespace mcuflow::kernels {

void softmax_s16_mve(const SoftmaxS16Params& p, const int16_t* input, const int16_t* exp_table, int16_t* output) {
  const uint32x4_t rounding = vdupq_n_u32(uint32_t{1} << (p.diff_shift - 1));
  const uint32x4_t last_input = vdupq_n_u32(65535);
  for (int32_t r = 0; r < p.rows; ++r) {
    const int16_t* in = input + r * p.depth;
    int16_t* out = output + r * p.depth;
    int16_t max_v = -32768;
    for (int32_t i = 0; i < p.depth; i += 8) {
      const mve_pred16_t lanes = vctp16q(uint32_t(p.depth - i));
      max_v = vmaxvq_p_s16(max_v, vldrhq_z_s16(in + i, lanes), lanes);
    }
    const int32x4_t max_lanes = vdupq_n_s32(max_v);
    uint32_t sum = 0;
    for (int32_t i = 0; i < p.depth; i += 4) {
      const mve_pred16_t lanes = vctp32q(uint32_t(p.depth - i));
      const uint32x4_t d = vreinterpretq_u32_s32(vsubq_s32(max_lanes, vldrhq_z_s32(in + i, lanes)));
      const uint32x4_t z = vminq_u32(vshlq_r_u32(vmlaq_n_u32(rounding, d, uint32_t(p.diff_multiplier)), -p.diff_shift),
                                     last_input);
      const int32x4_t e = mve::lut_s16_at(exp_table, z, lanes);
      vstrhq_p_s32(out + i, e, lanes);
      sum = vaddvaq_p_u32(sum, vreinterpretq_u32_s32(e), lanes);
    }
    const SoftmaxS16RowScale scale = softmax_s16_row_scale(sum);
    const uint32x4_t most = vdupq_n_u32(kSoftmaxS16OutputMax);
    for (int32_t i = 0; i < p.depth; i += 4) {
      const mve_pred16_t lanes = vctp32q(uint32_t(p.depth - i));
      const uint32x4_t e = vldrhq_z_u32(reinterpret_cast<const uint16_t*>(out + i), lanes);
      const uint32x4_t o = vminq_u32(vrshlq_n_u32(vmulq_n_u32(e, scale.inv), -scale.shift), most);
      vstrhq_p_u32(reinterpret_cast<uint16_t*>(out + i), o, lanes);
    }
  }
}

}  // namespace mcuflow::kernels
