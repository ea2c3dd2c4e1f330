// lut_s8 (a table lookup) and activation_f32 against the PyTorch definitions in double.
#include <gtest/gtest.h>

#include <cmath>

#include "mcuflow/kernels/kernels.h"
#include "test_util.h"

using namespace mcuflow::kernels;
using namespace mcuflow::test;

TEST(Lut, EveryInt8IndexesItsEntry) {
  std::vector<int8_t> table(256), in(256), out(256);
  for (int i = 0; i < 256; ++i) {
    table[size_t(i)] = int8_t(127 - i);
    in[size_t(i)] = int8_t(i - 128);
  }
  lut_s8(LutParams{256}, in.data(), table.data(), out.data());
  for (int i = 0; i < 256; ++i) EXPECT_EQ(out[size_t(i)], int8_t(127 - i)) << i;
}

namespace {

double reference(int function, double alpha, double x) {
  const double pi = 3.14159265358979323846;
  switch (function) {
    case kActSigmoid: return 1.0 / (1.0 + std::exp(-x));
    case kActTanh: return std::tanh(x);
    case kActHardswish: return x * std::min(std::max(x + 3.0, 0.0), 6.0) / 6.0;
    case kActHardsigmoid: return std::min(std::max(x + 3.0, 0.0), 6.0) / 6.0;
    case kActSilu: return x / (1.0 + std::exp(-x));
    case kActGelu: return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0)));
    case kActGeluTanh: return 0.5 * x * (1.0 + std::tanh(std::sqrt(2.0 / pi) * (x + 0.044715 * x * x * x)));
    case kActElu: return x > 0 ? x : alpha * (std::exp(x) - 1.0);
    case kActLeakyRelu: return x > 0 ? x : alpha * x;
    case kActNeg: return -x;
    case kActMish: return x * std::tanh(std::log(1.0 + std::exp(x)));
    case kActLog: return std::log(x);
    default: return std::fabs(x);
  }
}

}  // namespace

TEST(ActivationF32, EveryFunctionAgainstDouble) {
  Rng rng(9301);
  for (int f = 0; f < kActFunctionCount; ++f) {
    auto x = rng.floats(2000, -12.0, 12.0);
    if (f == kActLog) for (float& v : x) v = std::fabs(v);  // its domain
    const float alpha = float(rng.uniform(0.01, 1.5));
    std::vector<float> out(x.size());
    activation_f32(ActivationParams{int32_t(x.size()), f, alpha}, x.data(), out.data());
    for (size_t i = 0; i < x.size(); ++i) {
      const double want = reference(f, alpha, x[i]);
      // 1e-5 relative, plus the float rounding of the input itself for functions steep near 0.
      ASSERT_NEAR(out[i], want, 1e-5 * std::fabs(want) + 1e-6) << "function " << f << " x " << x[i];
    }
  }
}
