// Fixed-point helpers against values derived by hand from their definitions, and the
// softmax approximations against double-precision math.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>

#include "mcuflow/kernels/arith.h"

using namespace mcuflow::kernels;

namespace {
constexpr int32_t kMin = INT32_MIN;
constexpr int32_t kMax = INT32_MAX;
constexpr double kTwo31 = 2147483648.0;
}  // namespace

TEST(Arith, DoublingHighMulSaturatesOnlyMinTimesMin) {
  EXPECT_EQ(sat_rounding_doubling_high_mul(kMin, kMin), kMax);        // +1.0 is not representable
  EXPECT_EQ(sat_rounding_doubling_high_mul(kMax, kMax), 2147483646);  // (2^31-1)^2/2^31 = 2^31-2+2^-31
  EXPECT_EQ(sat_rounding_doubling_high_mul(kMin, kMax), -2147483647);  // exact: -(2^31-1)
  EXPECT_EQ(sat_rounding_doubling_high_mul(kMin, 1), -1);              // exact
  EXPECT_EQ(sat_rounding_doubling_high_mul(12345, kMin), -12345);      // x * -1.0
}

TEST(Arith, DoublingHighMulRoundsHalfUp) {
  const int32_t half = 1 << 30;  // 0.5 in Q0
  EXPECT_EQ(sat_rounding_doubling_high_mul(half, half), 1 << 29);  // 0.25
  EXPECT_EQ(sat_rounding_doubling_high_mul(1, half), 1);    // +0.5 -> 1
  EXPECT_EQ(sat_rounding_doubling_high_mul(-1, half), 0);   // -0.5 -> 0 (towards +inf)
  EXPECT_EQ(sat_rounding_doubling_high_mul(3, half), 2);    // +1.5 -> 2
  EXPECT_EQ(sat_rounding_doubling_high_mul(-3, half), -1);  // -1.5 -> -1
  EXPECT_EQ(sat_rounding_doubling_high_mul(1, 1), 0);       // 2^-31 -> 0
  EXPECT_EQ(sat_rounding_doubling_high_mul(-1, 1), 0);
  EXPECT_EQ(sat_rounding_doubling_high_mul(5, 3 << 29), 4);    // 5 * 0.75 = 3.75
  EXPECT_EQ(sat_rounding_doubling_high_mul(-5, 3 << 29), -4);  // -3.75
}

TEST(Arith, RoundingDivideByPotRoundsHalfAwayFromZero) {
  EXPECT_EQ(rounding_divide_by_pot(12345, 0), 12345);
  EXPECT_EQ(rounding_divide_by_pot(-12345, 0), -12345);
  EXPECT_EQ(rounding_divide_by_pot(5, 1), 3);    // 2.5
  EXPECT_EQ(rounding_divide_by_pot(-5, 1), -3);  // -2.5: the negative tie goes away from zero
  EXPECT_EQ(rounding_divide_by_pot(6, 2), 2);    // 1.5
  EXPECT_EQ(rounding_divide_by_pot(-6, 2), -2);  // -1.5
  EXPECT_EQ(rounding_divide_by_pot(5, 2), 1);    // 1.25
  EXPECT_EQ(rounding_divide_by_pot(-5, 2), -1);
  EXPECT_EQ(rounding_divide_by_pot(7, 2), 2);    // 1.75
  EXPECT_EQ(rounding_divide_by_pot(-7, 2), -2);
  EXPECT_EQ(rounding_divide_by_pot(-1, 1), -1);  // -0.5
  EXPECT_EQ(rounding_divide_by_pot(1, 1), 1);
  EXPECT_EQ(rounding_divide_by_pot(kMin, 31), -1);
  EXPECT_EQ(rounding_divide_by_pot(kMax, 31), 1);  // 0.99999...
  EXPECT_EQ(rounding_divide_by_pot(1 << 30, 31), 1);
  EXPECT_EQ(rounding_divide_by_pot(-(1 << 30), 31), -1);
  EXPECT_EQ(rounding_divide_by_pot((1 << 30) - 1, 31), 0);
  EXPECT_EQ(rounding_divide_by_pot(kMin, 1), -(1 << 30));
  EXPECT_EQ(rounding_divide_by_pot(kMax, 1), 1 << 30);  // 1073741823.5
}

TEST(Arith, RoundingDivideByPotMatchesDoubleRounding) {
  for (int e = 0; e <= 31; ++e) {
    for (int64_t x = -3000; x <= 3000; x += 7) {
      const int32_t xi = static_cast<int32_t>(x * 65521);
      const double q = static_cast<double>(xi) / std::ldexp(1.0, e);
      const double want = q < 0 ? -std::floor(-q + 0.5) : std::floor(q + 0.5);
      ASSERT_EQ(rounding_divide_by_pot(xi, e), static_cast<int32_t>(want)) << xi << " >> " << e;
    }
  }
}

TEST(Arith, SaturatingLeftShift) {
  EXPECT_EQ(saturating_left_shift(3, 4), 48);
  EXPECT_EQ(saturating_left_shift(-3, 4), -48);
  EXPECT_EQ(saturating_left_shift(1 << 29, 2), kMax);
  EXPECT_EQ(saturating_left_shift(-(1 << 29), 2), kMin);  // exactly -2^31: fits
  EXPECT_EQ(saturating_left_shift(-(1 << 29) - 1, 2), kMin);
  EXPECT_EQ(saturating_left_shift((1 << 29) - 1, 2), kMax - 3);
}

TEST(Arith, MultiplyByQuantizedMultiplierRoundsTwice) {
  const int32_t half = 1 << 30;
  EXPECT_EQ(multiply_by_quantized_multiplier(100, half, 0), 50);
  // 5 * 0.5 / 2 = 1.25, but the high multiply rounds 2.5 up to 3 and the shift rounds 1.5 to 2.
  EXPECT_EQ(multiply_by_quantized_multiplier(5, half, -1), 2);
  // -5 * 0.5 = -2.5 -> -2 (half up), then -1.0 -> -1.
  EXPECT_EQ(multiply_by_quantized_multiplier(-5, half, -1), -1);
  // shift > 0 shifts left first: 3 * 2^1 * 0.5 = 3.
  EXPECT_EQ(multiply_by_quantized_multiplier(3, half, 1), 3);
  EXPECT_EQ(multiply_by_quantized_multiplier(-1000, half, 3), -4000);
  // -7 * 1518500250 / 2^31 = -4.9497 -> -5; -5 / 8 = -0.625 -> -1.
  EXPECT_EQ(multiply_by_quantized_multiplier(-7, 1518500250, -3), -1);
  EXPECT_EQ(multiply_by_quantized_multiplier(kMax, kMax, 0), 2147483646);
  EXPECT_EQ(multiply_by_quantized_multiplier(kMin, half, -31), -1);  // -0.5 / ... = -0.5 -> -1
}

TEST(Arith, MultiplyByQuantizedMultiplierWithinOneOfExact) {
  // |result - x * M| < 1 for any multiplier in [2^30, 2^31) and shift.
  uint32_t s = 12345;
  auto next = [&s] { s = s * 1664525u + 1013904223u; return s; };
  for (int i = 0; i < 20000; ++i) {
    const int32_t x = static_cast<int32_t>(next()) >> (next() % 20);
    const int32_t m = static_cast<int32_t>((1u << 30) | (next() >> 2));
    const int32_t shift = -static_cast<int32_t>(next() % 20);
    const double exact = static_cast<double>(x) * m * std::ldexp(1.0, shift - 31);
    ASSERT_LT(std::fabs(multiply_by_quantized_multiplier(x, m, shift) - exact), 1.0) << x << " " << m << " " << shift;
  }
}

TEST(Arith, CountLeadingZeros) {
  EXPECT_EQ(count_leading_zeros(1u), 31);
  EXPECT_EQ(count_leading_zeros(0x80000000u), 0);
  EXPECT_EQ(count_leading_zeros(0x00080000u), 12);
}

TEST(Arith, ExpOnNegativeValues) {
  EXPECT_EQ(exp_on_negative_values_q5(0), kMax);  // exp(0) = 1.0, saturated
  // a = -1 = -1/4 + (-3/4): exp(-1/4) from the polynomial at the edge of its interval (Taylor
  // remainder (1/8)^5/120 ~ 2.5e-7, ~470 raw units) times exp(-1/4) * exp(-1/2) ~ 0.47.
  EXPECT_NEAR(exp_on_negative_values_q5(-(1 << 26)), std::exp(-1.0) * kTwo31, 256.0);
  double max_err = 0.0;
  for (int64_t raw = 0; raw >= INT32_MIN; raw -= 9973) {  // all of [-32, 0] in Q5
    const double a = static_cast<double>(raw) / (1 << 26);
    const double got = exp_on_negative_values_q5(static_cast<int32_t>(raw)) / kTwo31;
    max_err = std::max(max_err, std::fabs(got - std::exp(a)));
  }
  EXPECT_LT(max_err, 1e-6);  // the 4th order Taylor term bounds it at about 3e-7
}

TEST(Arith, ExpOnQuarterInterval) {
  for (int64_t raw = -(1 << 29); raw < 0; raw += 4099) {  // [-1/4, 0) in Q0
    const double a = static_cast<double>(raw) / kTwo31;
    ASSERT_NEAR(exp_on_interval_neg_quarter_to_0(static_cast<int32_t>(raw)) / kTwo31, std::exp(a), 1e-6);
  }
}

TEST(Arith, OneOverOnePlusX) {
  EXPECT_GE(one_over_one_plus_x_for_x_in_0_1(0), kMax - 8);  // 1/(1+0) = 1.0 (saturates)
  EXPECT_NEAR(one_over_one_plus_x_for_x_in_0_1(1 << 30), kTwo31 / 1.5, 8.0);
  for (int64_t raw = 0; raw <= kMax; raw += 65537) {
    const double x = static_cast<double>(raw) / kTwo31;
    ASSERT_NEAR(one_over_one_plus_x_for_x_in_0_1(static_cast<int32_t>(raw)), kTwo31 / (1.0 + x), 8.0) << raw;
  }
}
