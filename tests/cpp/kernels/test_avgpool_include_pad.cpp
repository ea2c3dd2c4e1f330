// avgpool_include_pad_s8 / _f32 against double math: padding counts as real zeros and every
// window divides by k_h * k_w (PyTorch count_include_pad=True).
#include <gtest/gtest.h>

#include "mcuflow/kernels/kernels.h"
#include "test_util.h"

using namespace mcuflow::kernels;
using namespace mcuflow::test;

TEST(AvgPoolIncludePad, Int8AndFloatAgainstDouble) {
  Rng rng(9201);
  for (int it = 0; it < 300; ++it) {
    const Geometry g = random_geometry(rng, false);
    const int32_t c = rng.uniform_int(1, 5);
    const Quant q = random_act_quant(rng);
    AvgPoolIncludePadParams p{};
    p.pool = PoolParams{g.in_h, g.in_w, c, g.out_h, g.out_w, g.k_h, g.k_w, g.stride_h, g.stride_w,
                        g.pad_top, g.pad_left, -128, 127, -3.4e38f, 3.4e38f};
    p.pad_value = q.zp;
    const auto x = rng.int8s(size_t(g.in_h) * g.in_w * c);
    std::vector<float> xf(x.size());
    for (size_t i = 0; i < x.size(); ++i) xf[i] = float((x[i] - q.zp) * q.scale);
    std::vector<int8_t> out(size_t(g.out_h) * g.out_w * c);
    std::vector<float> out_f(out.size());
    avgpool_include_pad_s8(p, x.data(), out.data());
    avgpool_include_pad_f32(p, xf.data(), out_f.data());
    size_t n = 0;
    for (int32_t oy = 0; oy < g.out_h; ++oy)
      for (int32_t ox = 0; ox < g.out_w; ++ox)
        for (int32_t ch = 0; ch < c; ++ch, ++n) {
          double sum = 0.0;
          for (int32_t ky = 0; ky < g.k_h; ++ky)
            for (int32_t kx = 0; kx < g.k_w; ++kx) {
              const int32_t iy = oy * g.stride_h - g.pad_top + ky, ix = ox * g.stride_w - g.pad_left + kx;
              if (iy >= 0 && iy < g.in_h && ix >= 0 && ix < g.in_w) sum += xf[(size_t(iy) * g.in_w + ix) * c + ch];
            }
          const double mean = sum / (g.k_h * g.k_w);
          // Input and output share the quantization: the mean of the integers, rounded once.
          ASSERT_LE(std::abs(out[n] - quantize_ref(mean, q.scale, q.zp)), 1) << "case " << it;
          ASSERT_NEAR(out_f[n], mean, 1e-5 * (1.0 + std::fabs(mean)) + 1e-6) << "case " << it;
        }
  }
}
