// Fixed-point helpers shared by every int8 kernel (docs/quantization.md "Integer arithmetic").
//
// Number formats: a "Qm" value here is an int32 whose real value is raw * 2^(m - 31), i.e. m
// integer bits and 31 - m fractional bits (Q0 covers [-1, 1)). The rounding rules below are
// the ones of the TFLite int8 quantization spec, which every tier must reproduce bit for bit:
//   - doubling high multiply: round half up (towards +inf), saturating its single overflow;
//   - divide by a power of two: round half away from zero;
//   - requantization: the two in sequence ("double rounding").
// Integer only: no floating point anywhere in this header.
#pragma once
#include <cstdint>

namespace mcuflow::kernels {

constexpr int32_t kInt32Min = INT32_MIN;
constexpr int32_t kInt32Max = INT32_MAX;

inline int32_t clamp_i32(int32_t x, int32_t lo, int32_t hi) {
  return x < lo ? lo : (x > hi ? hi : x);
}

// round(a * b / 2^31), ties towards +inf. The only product that does not fit is
// INT32_MIN * INT32_MIN (= +1.0 in Q0), which saturates to INT32_MAX.
inline int32_t sat_rounding_doubling_high_mul(int32_t a, int32_t b) {
  if (a == kInt32Min && b == kInt32Min) return kInt32Max;
  const int64_t ab = static_cast<int64_t>(a) * static_cast<int64_t>(b);
  // floor((ab + 2^30) / 2^31); `>>` on a negative int64 is an arithmetic (flooring) shift on
  // every compiler we target. |ab| <= 2^62 so the addition cannot overflow.
  return static_cast<int32_t>((ab + (int64_t{1} << 30)) >> 31);
}

// round(x / 2^exponent), ties away from zero; exponent in [0, 31].
inline int32_t rounding_divide_by_pot(int32_t x, int exponent) {
  const int32_t mask = static_cast<int32_t>((uint32_t{1} << exponent) - 1u);
  const int32_t remainder = x & mask;        // x - floor(x / 2^e) * 2^e, in [0, 2^e)
  const int32_t floor_q = x >> exponent;     // arithmetic shift: floor
  // Round up when the remainder exceeds half; at exactly half only for positive x, since
  // flooring already moved negative ties away from zero.
  const int32_t threshold = (mask >> 1) + (x < 0 ? 1 : 0);
  return floor_q + (remainder > threshold ? 1 : 0);
}

// x * 2^exponent saturated to int32, exponent in [0, 31] (exact when it fits).
inline int32_t saturating_left_shift(int32_t x, int exponent) {
  const int64_t wide = static_cast<int64_t>(x) * (int64_t{1} << exponent);
  if (wide > kInt32Max) return kInt32Max;
  if (wide < kInt32Min) return kInt32Min;
  return static_cast<int32_t>(wide);
}

// x << s as int32 multiplication by 2^s with two's-complement wrap-around, the behaviour of
// TFLite's `x * (1 << s)` on real hardware. Callers keep it in range; wrapping (not UB) keeps
// every tier bit-identical when they do not.
inline int32_t wrapping_left_shift(int32_t x, int s) {
  return static_cast<int32_t>(static_cast<uint32_t>(x) << s);
}

// Requantization: x * multiplier * 2^(shift - 31), multiplier a Q31 value in [2^30, 2^31).
// shift > 0 shifts left before the multiply (keeps precision), shift <= 0 divides after it.
inline int32_t multiply_by_quantized_multiplier(int32_t x, int32_t multiplier, int32_t shift) {
  const int left = shift > 0 ? shift : 0;
  const int right = shift > 0 ? 0 : -shift;
  return rounding_divide_by_pot(sat_rounding_doubling_high_mul(wrapping_left_shift(x, left), multiplier),
                                right);
}

// Requantization of an int16 kernel's int64 accumulator, |x| < 2^47 (the verifier bounds the
// bias and the reduction): x * multiplier * 2^(shift - 31) with the Q31 multiplier first rounded
// half up to Q15 (at most 2^15 - 1), so that the product fits 64 bits, then one division by
// 2^(15 - shift) rounding half up. shift in [-31, kWideMaxShift].
constexpr int64_t kWideAccumulatorLimit = int64_t{1} << 47;
constexpr int32_t kWideMaxShift = 14;
inline int32_t q15_multiplier(int32_t multiplier) {
  const int32_t m = (multiplier >> 16) + ((multiplier >> 15) & 1);
  return m > 32767 ? 32767 : m;
}
inline int64_t multiply_by_quantized_multiplier_wide(int64_t x, int32_t multiplier, int32_t shift) {
  const int right = 15 - shift;  // in [1, 46]
  return (x * q15_multiplier(multiplier) + (int64_t{1} << (right - 1))) >> right;
}

// ---------------------------------------------------------------------------------------
// Softmax helpers. All fixed-point products are sat_rounding_doubling_high_mul of the raw
// values (Qa * Qb -> Q(a+b)); additions wrap like plain int32 arithmetic.

inline int32_t fx_mul(int32_t a, int32_t b) { return sat_rounding_doubling_high_mul(a, b); }
inline int32_t fx_add(int32_t a, int32_t b) {
  return static_cast<int32_t>(static_cast<uint32_t>(a) + static_cast<uint32_t>(b));
}
inline int32_t fx_sub(int32_t a, int32_t b) {
  return static_cast<int32_t>(static_cast<uint32_t>(a) - static_cast<uint32_t>(b));
}

// Number of leading zero bits of a non-zero 32-bit value.
inline int count_leading_zeros(uint32_t x) {
#if defined(__GNUC__) || defined(__clang__)
  return __builtin_clz(x);
#else
  int n = 0;
  while (!(x & 0x80000000u)) { x <<= 1; ++n; }
  return n;
#endif
}

// exp(a) for a in [-1/4, 0), Q0 in and out. Taylor expansion around -1/8 to 4th order:
// exp(a) = e^(-1/8) * (1 + x + x^2/2 + x^3/6 + x^4/24) with x = a + 1/8 in [-1/8, 1/8).
inline int32_t exp_on_interval_neg_quarter_to_0(int32_t a) {
  const int32_t kExpMinusOneEighth = 1895147668;  // round(e^(-1/8) * 2^31)
  const int32_t kOneThird = 715827883;            // round(2^31 / 3)
  const int32_t x = fx_add(a, int32_t{1} << 28);  // + 1/8
  const int32_t x2 = fx_mul(x, x);
  const int32_t x3 = fx_mul(x2, x);
  const int32_t x4 = fx_mul(x2, x2);
  const int32_t x4_over_4 = rounding_divide_by_pot(x4, 2);
  // ((x^4/4 + x^3) / 3 + x^2) / 2 = x^4/24 + x^3/6 + x^2/2
  const int32_t poly =
      rounding_divide_by_pot(fx_add(fx_mul(fx_add(x4_over_4, x3), kOneThird), x2), 1);
  return fx_add(kExpMinusOneEighth, fx_mul(kExpMinusOneEighth, fx_add(x, poly)));
}

// exp(a) for a <= 0 given in Q5 (a in [-32, 0]); result in Q0 (exp(0) = INT32_MAX ~ 1.0).
// Split a = r + (-k/4), r in [-1/4, 0): exp(r) from the polynomial, then multiply by
// exp(-2^j) for every bit j (2^-2 ... 2^4) set in k/4.
inline int32_t exp_on_negative_values_q5(int32_t a) {
  constexpr int kFracBits = 31 - 5;
  const int32_t quarter = int32_t{1} << (kFracBits - 2);
  const int32_t r = (a & (quarter - 1)) - quarter;  // in [-1/4, 0), Q5
  // r in Q0: r * 2^5 never overflows since |r| <= 1/4.
  int32_t result = exp_on_interval_neg_quarter_to_0(saturating_left_shift(r, 5));
  const int32_t k = r - a;  // the non-negative multiple of 1/4 that was split off (Q5)
  // round(exp(-2^j) * 2^31) for j = -2 ... 4.
  static constexpr int32_t kExpNegPow2[7] = {1672461947, 1302514674, 790015084, 290630308,
                                             39332535,   720401,     242};
  for (int j = 0; j < 7; ++j) {
    if (k & (int32_t{1} << (kFracBits - 2 + j))) result = fx_mul(result, kExpNegPow2[j]);
  }
  return a == 0 ? kInt32Max : result;
}

// 1 / (1 + x) for x in [0, 1), Q0 in and out. Newton-Raphson on d = (1 + x) / 2 in [1/2, 1):
// y <- y + y * (1 - d * y), y in Q2 starting from 48/17 - 32/17 * d (the minimax linear
// start), three iterations; then 1/(1+x) = y / 2.
inline int32_t one_over_one_plus_x_for_x_in_0_1(int32_t x) {
  // d = round_half_away((x + 1.0) / 2) in Q0 with 1.0 represented as INT32_MAX.
  const int64_t s = static_cast<int64_t>(x) + kInt32Max;
  const int32_t d = static_cast<int32_t>((s + (s >= 0 ? 1 : -1)) / 2);
  const int32_t k48Over17 = 1515870810;      // round(48/17 * 2^29), Q2
  const int32_t kNeg32Over17 = -1010580540;  // round(-32/17 * 2^29), Q2
  const int32_t kOneQ2 = int32_t{1} << 29;
  int32_t y = fx_add(k48Over17, fx_mul(d, kNeg32Over17));  // Q0*Q2 -> Q2
  for (int i = 0; i < 3; ++i) {
    const int32_t e = fx_sub(kOneQ2, fx_mul(d, y));          // Q2
    y = fx_add(y, saturating_left_shift(fx_mul(y, e), 2));  // Q2*Q2 = Q4 -> Q2
  }
  // y / 2 in Q2 has the raw bits of y in Q1; Q1 -> Q0 is a saturating doubling.
  return saturating_left_shift(y, 1);
}

// ---------------------------------------------------------------------------------------
// Normalization helpers (group_norm_s8). Integer operations only, none of which can overflow
// for the stated ranges, so every compiler and core computes the same bits.

inline int count_leading_zeros64(uint64_t x) {
  const uint32_t high = static_cast<uint32_t>(x >> 32);
  return high ? count_leading_zeros(high) : 32 + count_leading_zeros(static_cast<uint32_t>(x));
}

// floor(sqrt(v)), digit by digit (two bits of v per result bit); exact for every v < 2^62.
inline uint32_t isqrt_u64(uint64_t v) {
  uint64_t root = 0;
  uint64_t bit = uint64_t{1} << 62;
  while (bit > v) bit >>= 2;
  while (bit != 0) {
    if (v >= root + bit) {
      v -= root + bit;
      root = (root >> 1) + bit;
    } else {
      root >>= 1;
    }
    bit >>= 2;
  }
  return static_cast<uint32_t>(root);
}

// 2^fraction_bits / sqrt(v) ~= value / 2^shift for 1 <= v < 2^60 (value 0 for v = 0),
// fraction_bits in [0, 30]. v is moved by an even shift k into [2^60, 2^62) (exact), s =
// floor(sqrt(v * 2^k)) lies in [2^30, 2^31) and value = floor(2^61 / s) in (2^30, 2^31]:
// 1/sqrt(v) = 2^(k/2) / sqrt(v * 2^k), so shift = 61 - fraction_bits - k/2 >= 1. Both
// roundings are downward; the relative error is below 2^-29.
struct InverseSqrt {
  int64_t value;
  int shift;
};
inline InverseSqrt inverse_sqrt(uint64_t v, int fraction_bits) {
  if (v == 0) return {0, 1};
  const int k = (62 - (64 - count_leading_zeros64(v))) & ~1;
  const uint32_t s = isqrt_u64(v << k);
  return {static_cast<int64_t>((uint64_t{1} << 61) / s), 61 - fraction_bits - k / 2};
}

// round(x / 2^shift), ties away from zero, for |x| < 2^62 and shift in [1, 62].
inline int64_t rounding_shift_right_i64(int64_t x, int shift) {
  const int64_t half = int64_t{1} << (shift - 1);
  return x >= 0 ? (x + half) >> shift : -((half - x) >> shift);
}

}  // namespace mcuflow::kernels
