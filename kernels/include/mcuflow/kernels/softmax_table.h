// softmax_s8's arithmetic in the pieces every tier shares (kernels/reference/softmax_s8.cpp,
// kernels/<tier>/softmax_s8_<tier>.cpp), and the exp table the tier kernels read.
//
// With int8 inputs a row element's difference d = x - max(row) takes one of 256 values
// (-255..0), so exp(d) is a table lookup: the compiler stores softmax_exp_table_entry(p, i) for
// i = 0..255 (d = i - 255) as the op's trailing constant input, and the tier kernels' load-time
// check recomputes every entry with the same function (a table that disagrees is refused).
//
// Ranges the tier kernels rely on:
//   - every entry is in [0, 2^31): exp_on_negative_values_q5 returns INT32_MAX or a product of
//     non-negative factors (the polynomial on [-1/4, 0) and the constants exp(-2^j) are
//     positive) for any int32 argument, and the diff_min cut-off stores 0;
//   - SoftmaxRowScale::inv_sum is in [2^30 - 4, 2^31): one_over_one_plus_x_for_x_in_0_1 was
//     evaluated for every x in [0, 2^31) (the only x a row sum yields).
// So every product inv_sum * exp is non-negative, the doubling high multiply never saturates and
// its "round half up" equals the "round half away from zero" of the following right shift.
#pragma once
#include <cstdint>

#include "mcuflow/kernels/arith.h"
#include "mcuflow/kernels/params.h"

namespace mcuflow::kernels {

constexpr int32_t kSoftmaxTableEntries = 256;   // entry i holds exp(i - 255)
constexpr int32_t kSoftmaxTableMaxIndex = 255;  // entry of d = 0
constexpr uint8_t kSoftmaxExpTableSlot = 1;      // the tier kernels' input slot of the table, after the row input

// exp(d) in Q0 for a row element with difference d = x - max (<= 0), as softmax_s8 evaluates
// it: d rescaled by beta * input_scale into Q5. d * 2^left_shift stays below 2^31 because
// |d| <= -diff_min (the compiler's radius) for every d the kernel uses.
inline int32_t softmax_exp_of_diff(const SoftmaxParams& p, int32_t diff) {
  const int32_t d_q5 =
      sat_rounding_doubling_high_mul(wrapping_left_shift(diff, p.input_left_shift), p.input_multiplier);
  return exp_on_negative_values_q5(d_q5);
}

// Entry i of the exp table: exp(i - 255), or 0 where i - 255 < diff_min (such elements add 0 to
// the sum and get probability 0, exactly what the reference's skipping them gives).
inline int32_t softmax_exp_table_entry(const SoftmaxParams& p, int32_t i) {
  const int32_t diff = i - kSoftmaxTableMaxIndex;
  return diff < p.diff_min ? 0 : softmax_exp_of_diff(p, diff);
}

// An element's share of the row sum in Q12 (12 integer bits, room for 4096 terms of at most 1.0).
inline int32_t softmax_sum_term(int32_t exp_q0) { return rounding_divide_by_pot(exp_q0, 12); }

// The reference's row sum from the exp table, entry x + offset for element x (offset = 255 -
// max): entries are non-negative, so each softmax_sum_term is floor((e + 2^11) / 2^12); the
// additions wrap like the reference's int32 ones.
inline int32_t softmax_table_row_sum(const int32_t* exp_table, const int8_t* row, int32_t depth, int32_t offset) {
  uint32_t sum_q12 = 0;
  for (int32_t i = 0; i < depth; ++i) sum_q12 += (uint32_t(exp_table[row[i] + offset]) + (1u << 11)) >> 12;
  return int32_t(sum_q12);
}

// What the output pass of a row needs: output = clamp(rounding_divide_by_pot(fx_mul(inv_sum,
// exp), out_shift) - 128, -128, 127), and -128 for every element when out_shift > 31.
struct SoftmaxRowScale {
  int32_t inv_sum;    // 2^bits_over_unit / sum, Q0
  int32_t out_shift;  // bits_over_unit + 31 - 8, in [23, 35]
};

// From the row's sum of softmax_sum_term (wrapping int32 additions).
inline SoftmaxRowScale softmax_row_scale(int32_t sum_q12) {
  // Normalise the sum to 1 + x, x in [0, 1) (Q0), times 2^bits_over_unit: the max element
  // contributes exp(0) = 1.0, so sum >= 1.0 and bits_over_unit >= 0.
  const int headroom_plus_one = count_leading_zeros(static_cast<uint32_t>(sum_q12));
  const int bits_over_unit = 12 - headroom_plus_one;
  const int32_t x = static_cast<int32_t>((static_cast<uint32_t>(sum_q12) << headroom_plus_one) -
                                         (uint32_t{1} << 31));
  // probability * 256 = exp * inv_sum / 2^bits_over_unit * 2^8, from a Q0 product.
  return {one_over_one_plus_x_for_x_in_0_1(x), bits_over_unit + 31 - 8};
}

// A row element's output from its exp (Q0) and the row's scale.
inline int8_t softmax_output(const SoftmaxRowScale& s, int32_t exp_q0) {
  const int32_t prod = fx_mul(s.inv_sum, exp_q0);  // >= 0
  // A shift past 31 bits (exp sum >= 512, so every probability < 1/512) leaves less than half
  // an output step: exactly 0 after rounding. int32 shifts cannot go there.
  const int32_t scaled = s.out_shift > 31 ? 0 : rounding_divide_by_pot(prod, s.out_shift);
  return static_cast<int8_t>(clamp_i32(scaled - 128, -128, 127));
}

}  // namespace mcuflow::kernels
