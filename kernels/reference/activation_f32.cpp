// Element-wise activation functions, float32, as PyTorch defines them. Each element is read
// before it is written, so in place is fine.
#include <cmath>

#include "mcuflow/kernels/kernels.h"

namespace mcuflow::kernels {
namespace {

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
    default: return std::fabs(x);  // kActAbs (the verifier admits no other value)
  }
}

}  // namespace

void activation_f32(const ActivationParams& p, const float* input, float* output) {
  for (int32_t i = 0; i < p.n; ++i) output[i] = apply(p.function, p.alpha, input[i]);
}

}  // namespace mcuflow::kernels
