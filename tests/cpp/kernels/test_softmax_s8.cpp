// softmax_s8: close to the real softmax of the dequantized inputs, probabilities summing to
// ~1, the documented corner cases, and golden rows recorded from LiteRT's reference int8
// softmax (BUILTIN_REF op resolver) with the same float32 input scale, beta 1.
#include <gtest/gtest.h>

#include <cmath>

#include "mcuflow/compiler/quant_math.h"
#include "mcuflow/kernels/kernels.h"
#include "test_util.h"

using namespace mcuflow::kernels;
using namespace mcuflow::test;

namespace {

SoftmaxParams params_for(double scale, int32_t rows, int32_t depth) {
  const auto r = mcuflow::compiler::softmax_rescale(scale);
  return SoftmaxParams{rows, depth, r.input_multiplier, r.input_left_shift, r.diff_min};
}

std::vector<int8_t> run(double scale, int32_t rows, const std::vector<int8_t>& in) {
  const SoftmaxParams p = params_for(scale, rows, static_cast<int32_t>(in.size()) / rows);
  std::vector<int8_t> out(in.size());
  softmax_s8(p, in.data(), out.data());
  return out;
}

}  // namespace

TEST(SoftmaxS8, RandomCloseToRealSoftmax) {
  Rng rng(6001);
  int32_t worst = 0;
  for (int i = 0; i < 400; ++i) {
    const int32_t rows = rng.uniform_int(1, 3), depth = rng.uniform_int(1, 300);
    const double scale = rng.log_uniform(0.002, 0.5);
    const int32_t zp = rng.uniform_int(-128, 127);  // irrelevant to softmax: only differences count
    const auto in = rng.int8s(static_cast<size_t>(rows * depth));
    const auto out = run(scale, rows, in);
    for (int32_t r = 0; r < rows; ++r) {
      const int8_t* x = &in[r * depth];
      double mx = -1e30, sum = 0.0;
      for (int32_t k = 0; k < depth; ++k) mx = std::max(mx, (x[k] - zp) * scale);
      for (int32_t k = 0; k < depth; ++k) sum += std::exp((x[k] - zp) * scale - mx);
      int32_t prob_sum = 0;
      for (int32_t k = 0; k < depth; ++k) {
        const double prob = std::exp((x[k] - zp) * scale - mx) / sum;
        const int32_t want = clampi(static_cast<int32_t>(round_half_away(prob * 256.0)) - 128, -128, 127);
        const int32_t got = out[r * depth + k];
        worst = std::max(worst, std::abs(got - want));
        ASSERT_LE(std::abs(got - want), 1) << "case " << i << " row " << r << " k " << k << " p " << prob;
        prob_sum += got + 128;
      }
      // Each output is within one step of its probability, and one element saturates at 255
      // when it alone holds the whole row (256 / 256 does not fit).
      ASSERT_LE(std::abs(prob_sum - 256), std::max(2, depth / 2)) << "case " << i << " depth " << depth;
    }
  }
  EXPECT_LE(worst, 1);
}

TEST(SoftmaxS8, SumIsAboutOneForShortRows) {
  Rng rng(6002);
  for (int i = 0; i < 300; ++i) {
    const int32_t depth = rng.uniform_int(2, 10);
    const auto in = rng.int8s(static_cast<size_t>(depth), -20, 20);
    const auto out = run(rng.log_uniform(0.02, 0.2), 1, in);
    int32_t s = 0;
    for (int8_t v : out) s += v + 128;
    ASSERT_NEAR(s, 256, 3) << "case " << i;
  }
}

TEST(SoftmaxS8, EqualInputsShareEqually) {
  for (int32_t depth : {1, 2, 3, 4, 5, 8, 10, 100, 256, 511}) {
    const std::vector<int8_t> in(static_cast<size_t>(depth), 42);
    const auto out = run(0.1, 1, in);
    const int32_t want = std::min(127, static_cast<int32_t>(round_half_away(256.0 / depth)) - 128);
    for (int8_t v : out) ASSERT_EQ(v, want) << "depth " << depth;
  }
}

TEST(SoftmaxS8, BeyondDiffMinIsExactlyZero) {
  // scale 0.5: the 255-step gap is 127.5 in real units, far below diff_min: probability 0.
  const std::vector<int8_t> in = {127, -128, 127, 0};
  const auto out = run(0.5, 1, in);
  EXPECT_EQ(out[0], 0);   // 1/2 -> 128 - 128
  EXPECT_EQ(out[1], -128);
  EXPECT_EQ(out[2], 0);
  EXPECT_EQ(out[3], -128);  // exp(-63.5) rounds to 0 too
}

TEST(SoftmaxS8, RowsAreIndependent) {
  const std::vector<int8_t> row_a = {1, 2, 3, 4, 5}, row_b = {-50, 0, 50, 100, -100};
  std::vector<int8_t> both(row_a);
  both.insert(both.end(), row_b.begin(), row_b.end());
  const auto out = run(0.05, 2, both);
  const auto a = run(0.05, 1, row_a), b = run(0.05, 1, row_b);
  EXPECT_EQ(std::vector<int8_t>(out.begin(), out.begin() + 5), a);
  EXPECT_EQ(std::vector<int8_t>(out.begin() + 5, out.end()), b);
}

TEST(SoftmaxS8, LongRowsUnderflowToZero) {
  // A row of 1000 equal values: every probability is 1/1000 < half an output step (1/512), so
  // each rounds to 0. (Exp sums >= 512 need a right shift past 31 bits; the kernel returns the
  // correctly rounded 0 there, where a plain int32 shift would be undefined.)
  const std::vector<int8_t> in(1000, -7);
  for (int8_t v : run(0.1, 1, in)) ASSERT_EQ(v, -128);
}

struct GoldenRow {
  float scale;
  int32_t zp;  // recorded for completeness; softmax only sees differences
  std::vector<int8_t> in, want;
};

TEST(SoftmaxS8, MatchesLiteRtReferenceGolden) {
  // Recorded from LiteRT 2.3 (ai-edge-litert) SOFTMAX int8, output scale 1/256, zero point -128.
  const GoldenRow rows[] = {
      {0.0500000007f, 10, {-106, 70, 39, -16, -18, 91, -106, 50, -77, -104},
       {-128, -71, -116, -127, -127, 36, -128, -107, -128, -128}},
      {0.200000003f, -5, {6, 121, 60, 66, 55, 73, 3}, {-128, 127, -128, -128, -128, -128, -128}},
      {0.00390625f, 0, {-96, 86, -13, 0, -34, -82, 109, 72, 36, -25, 82, 11, -15, -13, -70, -105},
       {-117, -106, -113, -112, -114, -117, -104, -107, -110, -114, -106, -112, -113, -113, -116, -118}},
      {1.0f, 0, {13, 99, -112, 91, 83}, {-128, 127, -128, -128, -128}},
      {0.0122999996f, -100, {-58, 33, -86, 66, 51, -38, -111, 120, -14, 100, 45, 71},
       {-122, -109, -124, -99, -104, -120, -125, -72, -117, -84, -106, -98}},
      {0.5f, 3, {66, -79, -35, -9, -1, -117, 11, -89, 62}, {97, -128, -128, -128, -128, -128, -128, -128, -97}},
  };
  for (const auto& g : rows) {
    EXPECT_EQ(run(g.scale, 1, g.in), g.want) << "scale " << g.scale;
  }
}

TEST(SoftmaxS8, MatchesLiteRtReferenceGoldenLongRows) {
  // x[i] = 4 * ((37 i) mod 61) - 120; summarised by the sum and FNV-1a hash of the outputs.
  struct Long {
    int32_t depth;
    float scale;
    int32_t sum;
    uint32_t fnv;
  };
  const Long cases[] = {{100, 0.100000001f, -12545, 0x9e3e9b1au},
                        {400, 0.0199999996f, -50971, 0xeb0b7f7eu},
                        {37, 0.300000012f, -4480, 0x01bbe3f3u}};
  for (const auto& c : cases) {
    std::vector<int8_t> in(static_cast<size_t>(c.depth));
    for (int32_t i = 0; i < c.depth; ++i) in[i] = static_cast<int8_t>(((i * 37) % 61) * 4 - 120);
    const auto out = run(c.scale, 1, in);
    int32_t sum = 0;
    uint32_t h = 2166136261u;
    for (int8_t v : out) {
      sum += v;
      h = (h ^ static_cast<uint8_t>(v)) * 16777619u;
    }
    EXPECT_EQ(sum, c.sum) << c.depth;
    EXPECT_EQ(h, c.fnv) << c.depth;
  }
}
