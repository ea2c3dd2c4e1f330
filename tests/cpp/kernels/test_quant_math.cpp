// Host-side quantization math: multiplier round trips, corner cases, and the add/mul/softmax
// rescale parameters.
#include <gtest/gtest.h>

#include <cmath>

#include "mcuflow/compiler/quant_math.h"
#include "test_util.h"

using mcuflow::compiler::add_rescale;
using mcuflow::compiler::mul_rescale;
using mcuflow::compiler::quantize_multiplier;
using mcuflow::compiler::softmax_rescale;

namespace {
double value_of(const mcuflow::compiler::QuantizedMultiplier& q) {
  return q.multiplier * std::ldexp(1.0, q.shift - 31);
}
}  // namespace

TEST(QuantMath, QuantizeMultiplierRoundTrips) {
  mcuflow::test::Rng rng(101);
  for (int i = 0; i < 20000; ++i) {
    const double real = rng.log_uniform(1e-9, 1e3);
    const auto q = quantize_multiplier(real);
    ASSERT_GE(q.multiplier, 1 << 30) << real;
    ASSERT_LE(q.multiplier, INT32_MAX) << real;
    // Q31 rounding: relative error at most half a unit in the last place, 2^-31 relative.
    ASSERT_LE(std::fabs(value_of(q) - real), real * std::ldexp(1.0, -31)) << real;
  }
}

TEST(QuantMath, QuantizeMultiplierExactPowersOfTwo) {
  EXPECT_EQ(quantize_multiplier(0.5).multiplier, 1 << 30);
  EXPECT_EQ(quantize_multiplier(0.5).shift, 0);
  EXPECT_EQ(quantize_multiplier(1.0).multiplier, 1 << 30);
  EXPECT_EQ(quantize_multiplier(1.0).shift, 1);
  EXPECT_EQ(quantize_multiplier(0.25).shift, -1);
  EXPECT_EQ(quantize_multiplier(3.0).multiplier, 3 << 29);  // 0.75 * 2^2
  EXPECT_EQ(quantize_multiplier(3.0).shift, 2);
}

TEST(QuantMath, QuantizeMultiplierRoundsUpToTwoPow31) {
  // A fraction within half a Q31 step of 1.0 rounds to 2^31, which does not fit: it must be
  // renormalised to 2^30 with the exponent one higher.
  const double just_below_one = 1.0 - std::ldexp(1.0, -33);  // frexp: 0.99999... * 2^0
  const auto q = quantize_multiplier(just_below_one);
  EXPECT_EQ(q.multiplier, 1 << 30);
  EXPECT_EQ(q.shift, 1);
  const auto q2 = quantize_multiplier(std::ldexp(just_below_one, -7));
  EXPECT_EQ(q2.multiplier, 1 << 30);
  EXPECT_EQ(q2.shift, -6);
  // Half a step below 1.0 exactly: std::round's tie goes away from zero, so it also rounds up.
  const auto q3 = quantize_multiplier(1.0 - std::ldexp(1.0, -32));
  EXPECT_EQ(q3.multiplier, 1 << 30);
  EXPECT_EQ(q3.shift, 1);
  // One full step below stays.
  const auto q4 = quantize_multiplier(1.0 - std::ldexp(1.0, -31));
  EXPECT_EQ(q4.multiplier, INT32_MAX);
  EXPECT_EQ(q4.shift, 0);
}

TEST(QuantMath, QuantizeMultiplierZeroAndTiny) {
  EXPECT_EQ(quantize_multiplier(0.0).multiplier, 0);
  EXPECT_EQ(quantize_multiplier(0.0).shift, 0);
  // Below 2^-32 no right shift of at most 31 bits can express it: flushed to 0.
  EXPECT_EQ(quantize_multiplier(std::ldexp(1.0, -40)).multiplier, 0);
  EXPECT_EQ(quantize_multiplier(std::ldexp(1.0, -40)).shift, 0);
  EXPECT_EQ(quantize_multiplier(std::ldexp(1.0, -32)).multiplier, 1 << 30);  // shift -31 still fits
  EXPECT_EQ(quantize_multiplier(std::ldexp(1.0, -32)).shift, -31);
}

TEST(QuantMath, AddRescale) {
  const auto r = add_rescale(0.05, 0.02, 0.08);
  EXPECT_EQ(r.left_shift, 20);
  EXPECT_NEAR(value_of(r.input1), 0.05 / 0.1, 1e-9);  // larger input: exactly 1/2
  EXPECT_EQ(r.input1.multiplier, 1 << 30);
  EXPECT_EQ(r.input1.shift, 0);
  EXPECT_NEAR(value_of(r.input2), 0.02 / 0.1, 1e-9);
  EXPECT_NEAR(value_of(r.output), 0.1 / (1048576.0 * 0.08), 1e-15);
  const auto s = add_rescale(0.01, 0.03, 0.02);  // symmetric in which input is larger
  EXPECT_EQ(s.input2.multiplier, 1 << 30);
  EXPECT_NEAR(value_of(s.input1), 1.0 / 6.0, 1e-9);
}

TEST(QuantMath, MulRescale) {
  const auto q = mul_rescale(0.05, 0.02, 0.003);
  EXPECT_NEAR(value_of(q), 0.05 * 0.02 / 0.003, 1e-9);
}

TEST(QuantMath, SoftmaxRescale) {
  // input_scale 1/16: real multiplier 2^-4 * 2^26 = 2^22 -> 2^30 * 2^(23-31), left shift 23.
  const auto r = softmax_rescale(1.0 / 16.0);
  EXPECT_EQ(r.input_multiplier, 1 << 30);
  EXPECT_EQ(r.input_left_shift, 23);
  // radius: 31 * 2^26 / 2^23 = 248 input steps (= 15.5 in real units, exp(-15.5) ~ 2e-7).
  EXPECT_EQ(r.diff_min, -248);
  mcuflow::test::Rng rng(7);
  for (int i = 0; i < 1000; ++i) {
    const double scale = rng.log_uniform(1e-4, 10.0);
    const auto s = softmax_rescale(scale);
    ASSERT_GE(s.input_left_shift, 0);
    ASSERT_NEAR(s.input_multiplier * std::ldexp(1.0, s.input_left_shift - 31), scale * 67108864.0,
                scale * 67108864.0 * 1e-9);
    // -diff_min is the largest difference whose shifted value stays within 31 * 2^26.
    const double lim = 31.0 * 67108864.0;
    ASSERT_LE(-static_cast<double>(s.diff_min) * std::ldexp(1.0, s.input_left_shift), lim);
    ASSERT_GT((1.0 - s.diff_min) * std::ldexp(1.0, s.input_left_shift), lim);
  }
  // beta scales like the input scale.
  const auto b = softmax_rescale(0.1, 2.0);
  const auto c = softmax_rescale(0.2, 1.0);
  EXPECT_EQ(b.input_multiplier, c.input_multiplier);
  EXPECT_EQ(b.input_left_shift, c.input_left_shift);
  EXPECT_EQ(b.diff_min, c.diff_min);
}
