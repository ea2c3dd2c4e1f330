// float32 -> int8 at a program's input, MVE, four lanes per step, exactly as quantize_f32_s8:
// MVE has no vector division, so each lane's x / scale is the FPU's (correctly rounded, as the
// reference's); then VRINTA (round half away, like std::round), the zero point added (exact
// wherever the result is not clamped), VMAXNM / VMINNM to [-128, 127] (a NaN gives -128, as
// the reference's !(v >= -128)), and the conversion of an integral value. Denormals cannot
// change the result: any |x / scale| < 0.5 rounds to 0 however it is represented. Tails are
// predicated; each step reads its four floats before it writes their four bytes.
#include <arm_mve.h>

#include "mcuflow/kernels/kernels_mve.h"

namespace mcuflow::kernels {

void quantize_f32_s8_mve(const QuantizeParams& p, const float* input, int8_t* output) {
  const float scale = p.scale;
  const float32x4_t zero_point = vdupq_n_f32(float(p.zero_point));
  const float32x4_t lowest = vdupq_n_f32(-128.0f), highest = vdupq_n_f32(127.0f);
  const int32_t n = p.n;
  for (int32_t i = 0; i < n; i += 4) {
    const mve_pred16_t lanes = vctp32q(uint32_t(n - i));
    // In q0, whose lanes are s0-s3: left to itself, GCC moves every lane through a core register.
    register float32x4_t q asm("q0") = vldrwq_z_f32(input + i, lanes);  // 0 past n
    asm("vdiv.f32 s0, s0, %[scale]\n\t"
        "vdiv.f32 s1, s1, %[scale]\n\t"
        "vdiv.f32 s2, s2, %[scale]\n\t"
        "vdiv.f32 s3, s3, %[scale]"
        : "+w"(q)
        : [scale] "t"(scale));
    const float32x4_t v = vminnmq_f32(vmaxnmq_f32(vaddq_f32(vrndaq_f32(q), zero_point), lowest), highest);
    vstrbq_p_s32(output + i, vcvtq_s32_f32(v), lanes);
  }
}

}  // namespace mcuflow::kernels
