// float32 -> int8 at a program's input, Armv7E-M with the single-precision FPU, exactly as
// quantize_f32_s8: d = x / scale by VDIV (correctly rounded, as the reference's); FPv4 has no
// round-half-away instruction (the reference calls roundf), so d is truncated by VCVT and its
// fraction d - trunc(d), exact for |d| <= 512, moves the result one away from zero at 0.5 or
// more. Beyond +-512 (and for a NaN, which the reference sends to the minimum) the clamp alone
// decides, as it does for the reference: every int8 zero point keeps those outside [-128, 127].
#include "mcuflow/kernels/kernels_dsp.h"

namespace mcuflow::kernels {

void quantize_f32_s8_dsp(const QuantizeParams& p, const float* input, int8_t* output) {
  const float scale = p.scale;
  const int32_t zero_point = p.zero_point, n = p.n;
  for (int32_t i = 0; i < n; ++i) {
    const float d = input[i] / scale;
    int32_t q;
    if (!(d >= -512.0f)) {
      q = -128;
    } else if (d > 512.0f) {
      q = 127;
    } else {
      const int32_t truncated = int32_t(d);
      const float fraction = d - float(truncated);
      q = truncated + (fraction >= 0.5f) - (fraction <= -0.5f) + zero_point;
      q = q < -128 ? -128 : (q > 127 ? 127 : q);
    }
    output[i] = int8_t(q);
  }
}

}  // namespace mcuflow::kernels
