// maxpool_s8 / avgpool_s8: exact against the integer definition, and within one step of the
// double-precision mean.
#include <gtest/gtest.h>

#include "mcuflow/kernels/kernels.h"
#include "test_util.h"

using namespace mcuflow::kernels;
using namespace mcuflow::test;

namespace {

struct PoolCase {
  PoolParams p{};
  std::vector<int8_t> input;
  std::vector<int32_t> want_max, want_avg_int, want_avg_double;
};

PoolCase make_case(Rng& rng) {
  PoolCase c;
  const Geometry g = random_geometry(rng, false);
  const int32_t ch = rng.uniform_int(1, 9);
  const Quant q = random_act_quant(rng);
  const ActRange act = random_act(rng, q);
  c.input = rng.int8s(static_cast<size_t>(g.in_h * g.in_w * ch));
  for (int32_t oy = 0; oy < g.out_h; ++oy)
    for (int32_t ox = 0; ox < g.out_w; ++ox)
      for (int32_t k = 0; k < ch; ++k) {
        int32_t mx = -1000, sum = 0, count = 0;
        for (int32_t ky = 0; ky < g.k_h; ++ky)
          for (int32_t kx = 0; kx < g.k_w; ++kx) {
            const int32_t iy = oy * g.stride_h - g.pad_top + ky, ix = ox * g.stride_w - g.pad_left + kx;
            if (iy < 0 || iy >= g.in_h || ix < 0 || ix >= g.in_w) continue;
            const int32_t v = c.input[(iy * g.in_w + ix) * ch + k];
            mx = std::max(mx, v);
            sum += v;
            ++count;
          }
        EXPECT_GT(count, 0);
        c.want_max.push_back(clampi(mx, act.lo, act.hi));
        // Integer definition: the mean of the raw int8 values, rounded half away from zero.
        c.want_avg_int.push_back(
            clampi(static_cast<int32_t>(round_half_away(static_cast<double>(sum) / count)), act.lo, act.hi));
        // Real-valued mean of the dequantized window, requantized with the same parameters.
        const double real_mean = (static_cast<double>(sum) / count - q.zp) * q.scale;
        c.want_avg_double.push_back(quantize_ref(real_mean, q.scale, q.zp, act.lo, act.hi));
      }
  c.p = PoolParams{g.in_h, g.in_w, ch, g.out_h, g.out_w, g.k_h, g.k_w, g.stride_h, g.stride_w,
                   g.pad_top, g.pad_left, act.lo, act.hi, 0.0f, 0.0f};
  return c;
}

}  // namespace

TEST(MaxPoolS8, RandomExact) {
  Rng rng(5001);
  for (int i = 0; i < 500; ++i) {
    const PoolCase c = make_case(rng);
    std::vector<int8_t> out(c.want_max.size());
    maxpool_s8(c.p, c.input.data(), out.data());
    ASSERT_EQ(diff_int8(out, c.want_max).max_abs, 0) << "case " << i;
  }
}

TEST(AvgPoolS8, RandomExactAndWithinOneStepOfDouble) {
  Rng rng(5002);
  for (int i = 0; i < 500; ++i) {
    const PoolCase c = make_case(rng);
    std::vector<int8_t> out(c.want_avg_int.size());
    avgpool_s8(c.p, c.input.data(), out.data());
    ASSERT_EQ(diff_int8(out, c.want_avg_int).max_abs, 0) << "case " << i;
    ASSERT_LE(diff_int8(out, c.want_avg_double).max_abs, 1) << "case " << i;
  }
}

TEST(AvgPoolS8, CountsOnlyValidElementsAndRoundsHalfAway) {
  // 2x2 input, 2x2 window, padding 1 on top/left, stride 1 -> 2x2 output.
  const PoolParams p{2, 2, 1, 2, 2, 2, 2, 1, 1, 1, 1, -128, 127, 0.0f, 0.0f};
  const int8_t in[4] = {-3, 2, 5, -8};
  int8_t out[4];
  avgpool_s8(p, in, out);
  EXPECT_EQ(out[0], -3);  // window {-3}: count 1
  EXPECT_EQ(out[1], -1);  // {-3, 2}: -0.5 -> -1 (away from zero)
  EXPECT_EQ(out[2], 1);   // {-3, 5}: 1
  EXPECT_EQ(out[3], -1);  // {-3, 2, 5, -8}: -1
  const int8_t in2[4] = {3, 2, 5, -8};
  avgpool_s8(p, in2, out);
  EXPECT_EQ(out[1], 3);   // {3, 2}: 2.5 -> 3
  EXPECT_EQ(out[3], 1);   // {3, 2, 5, -8}: 0.5 -> 1
}

TEST(MaxPoolS8, PaddingNeverWins) {
  // All inputs -100 with padding: the max must stay -100, not 0 or the zero point.
  const PoolParams p{2, 2, 1, 3, 3, 2, 2, 1, 1, 1, 1, -128, 127, 0.0f, 0.0f};
  const int8_t in[4] = {-100, -100, -100, -100};
  int8_t out[9];
  maxpool_s8(p, in, out);
  for (int8_t v : out) EXPECT_EQ(v, -100);
}
