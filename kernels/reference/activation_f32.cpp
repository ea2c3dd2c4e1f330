// Element-wise activation functions, float32, as PyTorch defines them. Each element is read
// before it is written, so in place is fine.
#include <cmath>
#include <cstring>

#include "mcuflow/kernels/kernels.h"

namespace mcuflow::kernels {
namespace {

// Natural logarithm of our own, identical on every core (no libm: newlib's and glibc's logf may
// differ in the last bit). Works on the bits: x = 2^e * m with m in [sqrt(1/2), sqrt(2)),
// denormals normalized with integer shifts (so a core that flushes denormals computes the same),
// log(m) = log1p(f), f = m - 1, through s = f / (2 + f): log1p(f) = 2 atanh(s)
// = f - hfsq + s * (hfsq + R(s^2)), hfsq = f^2 / 2, R the atanh series' tail 2/3 z + 2/5 z^2 ...
// (|s| <= 0.1716: the terms after z^4 are below 0.03 ulp). ln 2 is split so that e * hi is exact.
// Max error 0.86 ulp against the exact logarithm over every positive float (docs/audio.md).
// log(+0) = -inf, log(x < 0) = NaN, log(+inf) = +inf, NaN stays NaN, as PyTorch.
float log_f32(float x) {
  uint32_t bits;
  std::memcpy(&bits, &x, sizeof bits);
  constexpr uint32_t kInfBits = 0x7f800000u, kSignBit = 0x80000000u;
  if ((bits & ~kSignBit) == 0) return -INFINITY;
  if ((bits & kSignBit) != 0) return (bits & ~kSignBit) > kInfBits ? x : NAN;
  if (bits >= kInfBits) return x;  // +inf, NaN
  int32_t exponent = int32_t(bits >> 23) - 127;
  uint32_t mantissa = bits & 0x7fffffu;
  if (exponent == -127) {  // denormal: shift the leading one into the implicit bit's place
    exponent = -126;
    while ((mantissa & 0x800000u) == 0) {
      mantissa <<= 1;
      --exponent;
    }
    mantissa &= 0x7fffffu;
  }
  uint32_t m_bits = mantissa | 0x3f800000u;  // m in [1, 2)
  if (mantissa > 0x3504f3u) {                // m > sqrt(2): halve it
    m_bits = mantissa | 0x3f000000u;
    ++exponent;
  }
  float m;
  std::memcpy(&m, &m_bits, sizeof m);
  const float f = m - 1.0f;  // exact
  const float s = f / (2.0f + f);
  const float z = s * s;
  const float r = z * (0.666666666666666667f + z * (0.4f + z * (0.285714285714285714f + z * 0.222222222222222222f)));
  const float hfsq = 0.5f * f * f;
  const float e = float(exponent);
  constexpr float kLn2Hi = 0.693145751953125f;  // 16 significant bits: e * kLn2Hi exact for |e| <= 256
  constexpr float kLn2Lo = 1.42860682030941723212e-6f;
  return e * kLn2Hi + (f - (hfsq - (s * (hfsq + r) + e * kLn2Lo)));
}

float relu6_of_shifted(float x) {  // min(max(x + 3, 0), 6), shared by the hard functions
  const float v = x + 3.0f;
  return v < 0.0f ? 0.0f : (v > 6.0f ? 6.0f : v);
}

float apply(int32_t function, float alpha, float x) {
  switch (function) {
    case kActSigmoid: return 1.0f / (1.0f + std::exp(-x));
    case kActTanh: return std::tanh(x);
    case kActHardswish: return x * relu6_of_shifted(x) / 6.0f;
    case kActHardsigmoid: return relu6_of_shifted(x) / 6.0f;
    case kActSilu: return x / (1.0f + std::exp(-x));
    case kActGelu: return 0.5f * x * (1.0f + std::erf(x * 0.70710678118654752f));
    case kActGeluTanh: {
      const float inner = 0.79788456080286536f * (x + 0.044715f * x * x * x);  // sqrt(2/pi) * (...)
      return 0.5f * x * (1.0f + std::tanh(inner));
    }
    case kActElu: return x > 0.0f ? x : alpha * std::expm1(x);
    case kActLeakyRelu: return x > 0.0f ? x : x * alpha;
    case kActNeg: return -x;
    case kActMish: return x * std::tanh(std::log1p(std::exp(x)));
    case kActLog: return log_f32(x);
    default: return std::fabs(x);  // kActAbs (the verifier admits no other value)
  }
}

}  // namespace

void activation_f32(const ActivationParams& p, const float* input, float* output) {
  for (int32_t i = 0; i < p.n; ++i) output[i] = apply(p.function, p.alpha, input[i]);
}

}  // namespace mcuflow::kernels
