// int8 -> float32 at a program's output, MVE, four lanes per step, exactly as dequantize_s8_f32:
// q - zero_point is converted exactly and multiplied by the scale once, rounded to nearest like
// the FPU's product. The scale is normal (the compiler and the check require it), so every
// product is 0, normal or infinite: no denormal that MVE's flush-to-zero could change. Each step
// reads its four bytes before it writes their four floats, so the output may start below the
// input as the planner places element-wise ops that widen (the input then ends where the
// output does: a step's 16 bytes reach no byte of a later step's input).
#include <arm_mve.h>

#include "mcuflow/kernels/kernels_mve.h"

namespace mcuflow::kernels {

void dequantize_s8_f32_mve(const QuantizeParams& p, const int8_t* input, float* output) {
  const int32_t n = p.n;
  for (int32_t i = 0; i < n; i += 4) {
    const mve_pred16_t lanes = vctp32q(uint32_t(n - i));
    const int32x4_t q = vsubq_n_s32(vldrbq_z_s32(input + i, lanes), p.zero_point);
    vstrwq_p_f32(output + i, vmulq_n_f32(vcvtq_f32_s32(q), p.scale), lanes);
  }
}

}  // namespace mcuflow::kernels
