// float32 kernels against straightforward double-precision computations. Tolerance: 1e-5
// relative to the magnitude of the computation (for sums: the sum of the absolute terms, so
// cancellation does not turn float rounding into a large relative error).
#include <gtest/gtest.h>

#include <cmath>

#include "mcuflow/kernels/kernels.h"
#include "test_util.h"

using namespace mcuflow::kernels;
using namespace mcuflow::test;

namespace {

constexpr double kRel = 1e-5;

struct Ref {
  std::vector<double> value, magnitude;
};

// A random activation: none, ReLU or a [-a, b] range.
void random_act_f(Rng& rng, float& lo, float& hi) {
  switch (rng.uniform_int(0, 2)) {
    case 0: lo = -3.4e38f; hi = 3.4e38f; break;
    case 1: lo = 0.0f; hi = 3.4e38f; break;
    default: lo = static_cast<float>(-rng.uniform(0.0, 2.0)); hi = static_cast<float>(rng.uniform(0.0, 2.0)); break;
  }
}

void expect_close(const std::vector<float>& got, const Ref& ref, float lo, float hi, int case_no) {
  ASSERT_EQ(got.size(), ref.value.size());
  for (size_t i = 0; i < got.size(); ++i) {
    const double want = std::min<double>(hi, std::max<double>(lo, ref.value[i]));
    const double tol = kRel * std::max({std::fabs(want), ref.magnitude[i], 1e-30});
    ASSERT_NEAR(got[i], want, tol) << "case " << case_no << " element " << i;
  }
}

}  // namespace

TEST(ConvF32, RandomAgainstDouble) {
  Rng rng(8001);
  for (int i = 0; i < 300; ++i) {
    const Geometry g = random_geometry(rng, true);
    const int32_t in_c = rng.uniform_int(1, 9), out_c = rng.uniform_int(1, 7);
    const auto x = rng.floats(static_cast<size_t>(g.in_h * g.in_w * in_c), -1.0, 1.0);
    const auto w = rng.floats(static_cast<size_t>(out_c * g.k_h * g.k_w * in_c), -1.0, 1.0);
    const auto b = rng.floats(static_cast<size_t>(out_c), -1.0, 1.0);
    ConvParams p{g.in_h, g.in_w, in_c, g.out_h, g.out_w, out_c, g.k_h, g.k_w, g.stride_h, g.stride_w,
                 g.pad_top, g.pad_left, g.dil_h, g.dil_w, 0, 0, 0, 0, 0.0f, 0.0f};
    random_act_f(rng, p.act_min_f, p.act_max_f);
    Ref ref;
    for (int32_t oy = 0; oy < g.out_h; ++oy)
      for (int32_t ox = 0; ox < g.out_w; ++ox)
        for (int32_t oc = 0; oc < out_c; ++oc) {
          double s = b[oc], m = std::fabs(b[oc]);
          for (int32_t ky = 0; ky < g.k_h; ++ky)
            for (int32_t kx = 0; kx < g.k_w; ++kx) {
              const int32_t iy = oy * g.stride_h - g.pad_top + ky * g.dil_h;
              const int32_t ix = ox * g.stride_w - g.pad_left + kx * g.dil_w;
              if (iy < 0 || iy >= g.in_h || ix < 0 || ix >= g.in_w) continue;
              for (int32_t ic = 0; ic < in_c; ++ic) {
                const double t = static_cast<double>(x[(iy * g.in_w + ix) * in_c + ic]) *
                                 w[((oc * g.k_h + ky) * g.k_w + kx) * in_c + ic];
                s += t;
                m += std::fabs(t);
              }
            }
          ref.value.push_back(s);
          ref.magnitude.push_back(m);
        }
    std::vector<float> out(ref.value.size());
    conv_f32(p, x.data(), w.data(), b.data(), out.data());
    expect_close(out, ref, p.act_min_f, p.act_max_f, i);
  }
}

TEST(DwConvF32, RandomAgainstDouble) {
  Rng rng(8002);
  for (int i = 0; i < 300; ++i) {
    const Geometry g = random_geometry(rng, true);
    const int32_t in_c = rng.uniform_int(1, 9), mult = rng.uniform_int(1, 3), out_c = in_c * mult;
    const auto x = rng.floats(static_cast<size_t>(g.in_h * g.in_w * in_c), -1.0, 1.0);
    const auto w = rng.floats(static_cast<size_t>(g.k_h * g.k_w * out_c), -1.0, 1.0);
    const auto b = rng.floats(static_cast<size_t>(out_c), -1.0, 1.0);
    DwConvParams p{g.in_h, g.in_w, in_c, g.out_h, g.out_w, out_c, mult, g.k_h, g.k_w, g.stride_h, g.stride_w,
                   g.pad_top, g.pad_left, g.dil_h, g.dil_w, 0, 0, 0, 0, 0.0f, 0.0f};
    random_act_f(rng, p.act_min_f, p.act_max_f);
    Ref ref;
    for (int32_t oy = 0; oy < g.out_h; ++oy)
      for (int32_t ox = 0; ox < g.out_w; ++ox)
        for (int32_t oc = 0; oc < out_c; ++oc) {
          double s = b[oc], m = std::fabs(b[oc]);
          for (int32_t ky = 0; ky < g.k_h; ++ky)
            for (int32_t kx = 0; kx < g.k_w; ++kx) {
              const int32_t iy = oy * g.stride_h - g.pad_top + ky * g.dil_h;
              const int32_t ix = ox * g.stride_w - g.pad_left + kx * g.dil_w;
              if (iy < 0 || iy >= g.in_h || ix < 0 || ix >= g.in_w) continue;
              const double t = static_cast<double>(x[(iy * g.in_w + ix) * in_c + oc / mult]) *
                               w[(ky * g.k_w + kx) * out_c + oc];
              s += t;
              m += std::fabs(t);
            }
          ref.value.push_back(s);
          ref.magnitude.push_back(m);
        }
    std::vector<float> out(ref.value.size());
    dwconv_f32(p, x.data(), w.data(), b.data(), out.data());
    expect_close(out, ref, p.act_min_f, p.act_max_f, i);
  }
}

TEST(FcF32, RandomAgainstDouble) {
  Rng rng(8003);
  for (int i = 0; i < 300; ++i) {
    const int32_t rows = rng.uniform_int(1, 4), in_c = rng.uniform_int(1, 97), out_c = rng.uniform_int(1, 13);
    const auto x = rng.floats(static_cast<size_t>(rows * in_c), -1.0, 1.0);
    const auto w = rng.floats(static_cast<size_t>(out_c * in_c), -1.0, 1.0);
    const auto b = rng.floats(static_cast<size_t>(out_c), -1.0, 1.0);
    FcParams p{rows, in_c, out_c, 0, 0, 0, 0, 0, 0.0f, 0.0f};
    random_act_f(rng, p.act_min_f, p.act_max_f);
    Ref ref;
    for (int32_t r = 0; r < rows; ++r)
      for (int32_t o = 0; o < out_c; ++o) {
        double s = b[o], m = std::fabs(b[o]);
        for (int32_t k = 0; k < in_c; ++k) {
          const double t = static_cast<double>(x[r * in_c + k]) * w[o * in_c + k];
          s += t;
          m += std::fabs(t);
        }
        ref.value.push_back(s);
        ref.magnitude.push_back(m);
      }
    std::vector<float> out(ref.value.size());
    fc_f32(p, x.data(), w.data(), b.data(), out.data());
    expect_close(out, ref, p.act_min_f, p.act_max_f, i);
    // Without bias.
    for (int32_t r = 0; r < rows; ++r)
      for (int32_t o = 0; o < out_c; ++o) {
        ref.value[r * out_c + o] -= b[o];
        ref.magnitude[r * out_c + o] -= std::fabs(b[o]);
      }
    fc_f32(p, x.data(), w.data(), nullptr, out.data());
    expect_close(out, ref, p.act_min_f, p.act_max_f, i);
  }
}

TEST(BinaryF32, AddAndMulAllBroadcastModes) {
  Rng rng(8004);
  for (int i = 0; i < 300; ++i) {
    const int32_t outer = rng.uniform_int(1, 9), inner = rng.uniform_int(1, 13), mode = i % 3;
    BinaryParams p{};
    p.outer = outer;
    p.inner = inner;
    p.in2_mode = mode;
    random_act_f(rng, p.act_min_f, p.act_max_f);
    const auto a = rng.floats(static_cast<size_t>(outer * inner), -3.0, 3.0);
    const auto b = rng.floats(static_cast<size_t>(mode == 0 ? outer * inner : (mode == 1 ? inner : 1)), -3.0, 3.0);
    Ref sum, prod;
    for (int32_t o = 0; o < outer; ++o)
      for (int32_t k = 0; k < inner; ++k) {
        const double x = a[o * inner + k], y = b[mode == 0 ? o * inner + k : (mode == 1 ? k : 0)];
        sum.value.push_back(x + y);
        sum.magnitude.push_back(std::fabs(x) + std::fabs(y));
        prod.value.push_back(x * y);
        prod.magnitude.push_back(std::fabs(x * y));
      }
    std::vector<float> out(a.size());
    add_f32(p, a.data(), b.data(), out.data());
    expect_close(out, sum, p.act_min_f, p.act_max_f, i);
    mul_f32(p, a.data(), b.data(), out.data());
    expect_close(out, prod, p.act_min_f, p.act_max_f, i);
  }
}

TEST(PoolF32, MaxAndAverageOverValidElements) {
  Rng rng(8005);
  for (int i = 0; i < 300; ++i) {
    const Geometry g = random_geometry(rng, false);
    const int32_t ch = rng.uniform_int(1, 9);
    PoolParams p{g.in_h, g.in_w, ch, g.out_h, g.out_w, g.k_h, g.k_w, g.stride_h, g.stride_w,
                 g.pad_top, g.pad_left, 0, 0, 0.0f, 0.0f};
    random_act_f(rng, p.act_min_f, p.act_max_f);
    const auto x = rng.floats(static_cast<size_t>(g.in_h * g.in_w * ch), -5.0, 5.0);
    Ref mx, avg;
    for (int32_t oy = 0; oy < g.out_h; ++oy)
      for (int32_t ox = 0; ox < g.out_w; ++ox)
        for (int32_t c = 0; c < ch; ++c) {
          double m = -1e300, s = 0.0, mag = 0.0;
          int count = 0;
          for (int32_t ky = 0; ky < g.k_h; ++ky)
            for (int32_t kx = 0; kx < g.k_w; ++kx) {
              const int32_t iy = oy * g.stride_h - g.pad_top + ky, ix = ox * g.stride_w - g.pad_left + kx;
              if (iy < 0 || iy >= g.in_h || ix < 0 || ix >= g.in_w) continue;
              const double v = x[(iy * g.in_w + ix) * ch + c];
              m = std::max(m, v);
              s += v;
              mag += std::fabs(v);
              ++count;
            }
          mx.value.push_back(m);
          mx.magnitude.push_back(0.0);  // max is exact
          avg.value.push_back(s / count);
          avg.magnitude.push_back(mag / count);
        }
    std::vector<float> out(mx.value.size());
    maxpool_f32(p, x.data(), out.data());
    expect_close(out, mx, p.act_min_f, p.act_max_f, i);
    avgpool_f32(p, x.data(), out.data());
    expect_close(out, avg, p.act_min_f, p.act_max_f, i);
  }
}

TEST(SoftmaxF32, RandomAgainstDouble) {
  Rng rng(8006);
  for (int i = 0; i < 300; ++i) {
    const int32_t rows = rng.uniform_int(1, 3), depth = rng.uniform_int(1, 300);
    const double spread = rng.log_uniform(0.1, 50.0);
    const auto x = rng.floats(static_cast<size_t>(rows * depth), -spread, spread);
    const SoftmaxParams p{rows, depth, 0, 0, 0};
    Ref ref;
    for (int32_t r = 0; r < rows; ++r) {
      double mx = -1e300, s = 0.0;
      for (int32_t k = 0; k < depth; ++k) mx = std::max<double>(mx, x[r * depth + k]);
      for (int32_t k = 0; k < depth; ++k) s += std::exp(x[r * depth + k] - mx);
      for (int32_t k = 0; k < depth; ++k) {
        ref.value.push_back(std::exp(x[r * depth + k] - mx) / s);
        ref.magnitude.push_back(0.0);
      }
    }
    std::vector<float> out(x.size());
    softmax_f32(p, x.data(), out.data());
    // Relative to each probability, plus an absolute 1e-7 floor for the tiny ones (exp of a
    // difference below about -87 falls into float's subnormal range, where precision drops).
    for (size_t k = 0; k < out.size(); ++k) ASSERT_NEAR(out[k], ref.value[k], kRel * ref.value[k] + 1e-7) << i;
  }
}

TEST(ClampF32, ExactAndInPlace) {
  Rng rng(8007);
  auto buf = rng.floats(500, -10.0, 10.0);
  const auto orig = buf;
  const ClampParams p{500, 0, 0, -1.5f, 6.0f};
  std::vector<float> out(500);
  clamp_f32(p, buf.data(), out.data());
  clamp_f32(p, buf.data(), buf.data());
  for (size_t k = 0; k < 500; ++k) {
    ASSERT_EQ(out[k], std::min(6.0f, std::max(-1.5f, orig[k])));
    ASSERT_EQ(buf[k], out[k]);
  }
}

TEST(ConcatSliceF32, CopiesIntoItsSliceOnly) {
  Rng rng(8008);
  for (int i = 0; i < 100; ++i) {
    const int32_t outer = rng.uniform_int(1, 20), in_c = rng.uniform_int(1, 9);
    const int32_t offset = rng.uniform_int(0, 5), out_c = offset + in_c + rng.uniform_int(0, 5);
    const ConcatSliceParams p{outer, in_c, out_c, offset, 0, 0, 0, 0, 0};
    const auto in = rng.floats(static_cast<size_t>(outer * in_c), -1.0, 1.0);
    std::vector<float> out(static_cast<size_t>(outer * out_c), 42.0f);
    concat_slice_f32(p, in.data(), out.data());
    for (int32_t o = 0; o < outer; ++o)
      for (int32_t c = 0; c < out_c; ++c) {
        const bool inside = c >= offset && c < offset + in_c;
        ASSERT_EQ(out[o * out_c + c], inside ? in[o * in_c + c - offset] : 42.0f);
      }
  }
}
