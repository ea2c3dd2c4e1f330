// layer_norm_f32 against double precision (biased variance, eps inside the square root).
#include <gtest/gtest.h>

#include <cmath>

#include "mcuflow/kernels/kernels.h"
#include "test_util.h"

using namespace mcuflow::kernels;
using namespace mcuflow::test;

TEST(LayerNormF32, AgainstDouble) {
  Rng rng(9801);
  for (int it = 0; it < 100; ++it) {
    const int32_t rows = rng.uniform_int(1, 5), depth = rng.uniform_int(1, 70);
    const double offset = rng.uniform(-5.0, 5.0);
    const auto x = rng.floats(size_t(rows * depth), offset - 2.0, offset + 2.0);
    const auto w = rng.floats(size_t(depth), -2.0, 2.0), b = rng.floats(size_t(depth), -1.0, 1.0);
    const float eps = float(rng.log_uniform(1e-6, 1e-2));
    std::vector<float> out(x.size());
    layer_norm_f32(LayerNormParams{rows, depth, eps}, x.data(), w.data(), b.data(), out.data());
    for (int32_t r = 0; r < rows; ++r) {
      double mean = 0.0, var = 0.0;
      for (int32_t i = 0; i < depth; ++i) mean += x[size_t(r * depth + i)];
      mean /= depth;
      for (int32_t i = 0; i < depth; ++i) var += (x[size_t(r * depth + i)] - mean) * (x[size_t(r * depth + i)] - mean);
      const double inv_std = 1.0 / std::sqrt(var / depth + eps);
      for (int32_t i = 0; i < depth; ++i) {
        const double normalized = (x[size_t(r * depth + i)] - mean) * inv_std;
        const double want = normalized * w[size_t(i)] + b[size_t(i)];
        ASSERT_NEAR(out[size_t(r * depth + i)], want, 1e-5 * (std::fabs(normalized * w[size_t(i)]) + std::fabs(b[size_t(i)])) + 1e-5)
            << "case " << it;
      }
    }
  }
}
