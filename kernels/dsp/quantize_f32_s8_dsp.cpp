// float32 -> int8 at a program's input, Armv7E-M with the single-precision FPU, exactly as
// quantize_f32_s8: d = x / scale by VDIV (correctly rounded, as the reference's). FPv4 has no
// round-half-away instruction (the reference calls roundf): d is truncated by VCVT, and its
// fraction f = d - trunc(d), exact for |d| <= 512, doubled (exactly) and truncated again gives
// the step away from zero (|2f| >= 1 exactly when |f| >= 0.5); the zero point added, SSAT
// clamps. Beyond +-512 and for a NaN (the reference's minimum) the sign alone decides, as the
// clamp does for the reference: every int8 zero point keeps those outside [-128, 127].
#include <arm_acle.h>

#include <cmath>

#include "mcuflow/kernels/kernels_dsp.h"

namespace mcuflow::kernels {

void quantize_f32_s8_dsp(const QuantizeParams& p, const float* input, int8_t* output) {
  const float scale = p.scale;
  const int32_t zero_point = p.zero_point, n = p.n;
  for (int32_t i = 0; i < n; ++i) {
    const float d = input[i] / scale;
    int32_t q;
    if (std::fabs(d) <= 512.0f) {
      const int32_t truncated = int32_t(d);
      const float fraction = d - float(truncated);
      q = __ssat(truncated + int32_t(fraction + fraction) + zero_point, 8);
    } else {
      q = d > 0.0f ? 127 : -128;
    }
    output[i] = int8_t(q);
  }
}

}  // namespace mcuflow::kernels
