// group_norm_s8 (and its integer square root helpers) against double precision on the
// dequantized inputs; group_norm_f32 against double on GroupNorm geometries. The int8 tables
// are built here from the real weights the simplest way (weight +-127, its magnitude in the
// channel multiplier), not with the compiler's code.
#include <gtest/gtest.h>

#include <cmath>

#include "mcuflow/kernels/arith.h"
#include "mcuflow/kernels/kernels.h"
#include "test_util.h"

using namespace mcuflow::kernels;
using namespace mcuflow::test;

namespace {

TEST(GroupNormArith, IsqrtIsTheFloorOfTheSquareRoot) {
  auto check = [](uint64_t v) {
    const unsigned __int128 r = isqrt_u64(v);
    ASSERT_LE(r * r, v) << v;
    ASSERT_GT((r + 1) * (r + 1), v) << v;
  };
  for (uint64_t v = 0; v < 70000; ++v) check(v);
  std::mt19937_64 gen(5);
  for (int i = 0; i < 200000; ++i) check(gen() >> (2 + gen() % 60));
  for (int b = 1; b < 62; ++b) {  // around powers of two and squares
    const uint64_t p = uint64_t{1} << b;
    check(p - 1), check(p), check(p + 1);
    const uint64_t s = uint64_t(std::sqrt(double(p)));
    check(s * s - 1), check(s * s), check(s * s + 1);
  }
  check((uint64_t{1} << 62) - 1);
}

TEST(GroupNormArith, InverseSqrtWithin2ToMinus29) {
  std::mt19937_64 gen(6);
  for (int i = 0; i < 200000; ++i) {
    const uint64_t v = 1 + (gen() >> (4 + gen() % 60));  // 1 ... 2^60
    const InverseSqrt r = inverse_sqrt(v, kGroupNormFractionBits);
    ASSERT_GE(r.shift, 1);
    const long double got = std::ldexp((long double)r.value, -r.shift);
    const long double want = std::ldexp(1.0L, kGroupNormFractionBits) / std::sqrt((long double)v);
    ASSERT_LE(std::fabs(got / want - 1), std::ldexp(1.0L, -29)) << v;
  }
  EXPECT_EQ(inverse_sqrt(0, kGroupNormFractionBits).value, 0);
}

struct Case {
  GroupNormParams p{};
  std::vector<int8_t> x;
  Quant in{};
  std::vector<double> gamma, beta;
};

// The kernel's output for `c` against quantize(double normalization), at most one step apart.
void expect_within_one_step(const Case& c, Rng& rng, const char* what) {
  const GroupNormParams& g = c.p;
  const int32_t channels = g.groups * g.group_size, count = g.spatial * g.group_size;
  std::vector<double> ref(c.x.size());
  for (int32_t o = 0; o < g.outer; ++o)
    for (int32_t grp = 0; grp < g.groups; ++grp) {
      auto at = [&](int32_t s, int32_t j) { return size_t((o * g.spatial + s) * channels + grp * g.group_size + j); };
      // Mean and variance from exact integer sums (the input zero point cancels), so a
      // group without variance has exactly none.
      int64_t sum = 0, sum_sq = 0;
      for (int32_t s = 0; s < g.spatial; ++s)
        for (int32_t j = 0; j < g.group_size; ++j) sum += c.x[at(s, j)], sum_sq += c.x[at(s, j)] * c.x[at(s, j)];
      const double var = c.in.scale * c.in.scale * double(count * sum_sq - sum * sum) / (double(count) * count);
      const double denominator = var + g.eps;  // 0 only for a constant group without eps
      const double inv_std = denominator > 0 ? 1 / std::sqrt(denominator) : 0.0;
      for (int32_t s = 0; s < g.spatial; ++s)
        for (int32_t j = 0; j < g.group_size; ++j) {
          const int32_t ch = grp * g.group_size + j;
          const double centered = c.in.scale * double(count * c.x[at(s, j)] - sum) / count;
          ref[at(s, j)] = centered * inv_std * c.gamma[size_t(ch)] + c.beta[size_t(ch)];
        }
    }
  const Quant out = fit_output_quant(ref, rng);
  GroupNormParams p = g;
  const double eps_q = std::round(std::ldexp(double(count) * count * g.eps, kGroupNormVarianceBits) / (c.in.scale * c.in.scale));
  p.eps_lo = int32_t(uint32_t(uint64_t(eps_q)));
  p.eps_hi = int32_t(uint32_t(uint64_t(eps_q) >> 32));
  p.output_offset = out.zp;
  p.act_min = -128;
  p.act_max = 127;
  const double unit = std::ldexp(1.0, -kGroupNormFractionBits);
  const size_t n = static_cast<size_t>(channels);
  std::vector<int8_t> w(n);
  std::vector<int32_t> bias(n), mult(n), shift(n);
  for (int32_t ch = 0; ch < channels; ++ch) {
    // The weight's magnitude in the multiplier; a scale large enough for the bias to fit.
    double scale = std::max(std::fabs(c.gamma[size_t(ch)]) / 127, std::fabs(c.beta[size_t(ch)]) / (unit * 0.99 * kGroupNormMaxBias));
    if (scale == 0) scale = 1.0;
    w[size_t(ch)] = int8_t(round_half_away(c.gamma[size_t(ch)] / scale));
    bias[size_t(ch)] = int32_t(round_half_away(c.beta[size_t(ch)] / (unit * scale)));
    ASSERT_LE(std::abs(bias[size_t(ch)]), kGroupNormMaxBias);
    const auto m = mcuflow::compiler::quantize_multiplier(unit * scale / out.scale);
    ASSERT_LE(m.shift, 0);
    mult[size_t(ch)] = m.multiplier;
    shift[size_t(ch)] = m.shift;
  }
  std::vector<int8_t> y(c.x.size());
  group_norm_s8(p, c.x.data(), w.data(), bias.data(), mult.data(), shift.data(), y.data());
  for (size_t i = 0; i < y.size(); ++i)
    ASSERT_LE(std::abs(y[i] - quantize_ref(ref[i], out.scale, out.zp)), 1)
        << what << " element " << i << " count " << count << " eps_q " << eps_q << " ref " << ref[i] / out.scale;
}

TEST(GroupNormS8, RandomGeometriesWithinOneStepOfDouble) {
  Rng rng(777);
  for (int it = 0; it < 300; ++it) {
    Case c;
    c.p.outer = rng.uniform_int(1, 3);
    c.p.spatial = rng.uniform_int(1, 12);
    c.p.groups = rng.uniform_int(1, 4);
    c.p.group_size = rng.uniform_int(1, 9);
    c.p.eps = float(rng.log_uniform(1e-6, 1e-1));
    c.in = random_act_quant(rng);
    const int32_t channels = c.p.groups * c.p.group_size;
    const int32_t lo = rng.uniform_int(-128, 120);
    c.x = rng.int8s(size_t(c.p.outer * c.p.spatial * channels), lo, rng.uniform_int(lo, 127));
    for (int32_t ch = 0; ch < channels; ++ch) {
      c.gamma.push_back(rng.coin(0.1) ? 0.0 : rng.uniform(-2.0, 2.0));
      c.beta.push_back(rng.uniform(-1.0, 1.0));
    }
    expect_within_one_step(c, rng, "random");
  }
}

TEST(GroupNormS8, ExtremesOfTheProvenRanges) {
  Rng rng(778);
  const int32_t n = kGroupNormMaxCount;
  auto make = [&](int32_t spatial, int32_t group_size, float eps) {
    Case c;
    c.p.outer = 1;
    c.p.spatial = spatial;
    c.p.groups = 1;
    c.p.group_size = group_size;
    c.p.eps = eps;
    c.in = {0.05, 0};
    c.gamma.assign(size_t(group_size), 1.5);
    c.beta.assign(size_t(group_size), -0.5);
    return c;
  };
  Case widest = make(n / 4, 4, 1e-5f);  // largest variance: half -128, half 127
  for (int32_t i = 0; i < n; ++i) widest.x.push_back(int8_t(i % 2 ? 127 : -128));
  expect_within_one_step(widest, rng, "largest variance");
  Case outlier = make(1, n, 1e-5f);  // one 127 among -128: |normalized| = sqrt(count - 1)
  outlier.x.assign(size_t(n), -128);
  outlier.x[12345] = 127;
  expect_within_one_step(outlier, rng, "outlier");
  Case flat = make(3, 5, 0.0f);  // no variance and no eps: v = 0, the output is the bias
  flat.x.assign(15, 42);
  expect_within_one_step(flat, rng, "constant");
  Case huge_eps = make(2, 3, 1.2e7f);  // eps_q = 4.4e17, near the 2^59 bound
  huge_eps.in = {0.002, -3};
  huge_eps.x = {-128, 127, 0, 5, -7, 100};
  expect_within_one_step(huge_eps, rng, "large eps");
}

TEST(GroupNormF32, AgainstDouble) {
  Rng rng(779);
  for (int it = 0; it < 100; ++it) {
    GroupNormParams p{};
    p.outer = rng.uniform_int(1, 2);
    p.spatial = rng.uniform_int(1, 20);
    p.groups = rng.uniform_int(1, 4);
    p.group_size = rng.uniform_int(1, 6);
    p.eps = float(rng.log_uniform(1e-6, 1e-2));
    const int32_t channels = p.groups * p.group_size, count = p.spatial * p.group_size;
    const auto x = rng.floats(size_t(p.outer * p.spatial * channels), -3.0, 4.0);
    const auto w = rng.floats(size_t(channels), -2.0, 2.0), b = rng.floats(size_t(channels), -1.0, 1.0);
    std::vector<float> y(x.size());
    group_norm_f32(p, x.data(), w.data(), b.data(), y.data());
    for (int32_t o = 0; o < p.outer; ++o)
      for (int32_t g = 0; g < p.groups; ++g) {
        auto at = [&](int32_t s, int32_t j) { return size_t((o * p.spatial + s) * channels + g * p.group_size + j); };
        double mean = 0, var = 0;
        for (int32_t s = 0; s < p.spatial; ++s)
          for (int32_t j = 0; j < p.group_size; ++j) mean += x[at(s, j)];
        mean /= count;
        for (int32_t s = 0; s < p.spatial; ++s)
          for (int32_t j = 0; j < p.group_size; ++j) var += std::pow(x[at(s, j)] - mean, 2);
        for (int32_t s = 0; s < p.spatial; ++s)
          for (int32_t j = 0; j < p.group_size; ++j) {
            const size_t c = size_t(g * p.group_size + j);
            const double want = (x[at(s, j)] - mean) / std::sqrt(var / count + p.eps) * w[c] + b[c];
            ASSERT_NEAR(y[at(s, j)], want, 2e-5 * (std::fabs(want) + 1)) << "case " << it;
          }
      }
  }
}

}  // namespace
