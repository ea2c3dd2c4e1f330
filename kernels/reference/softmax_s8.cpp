// Softmax over the last axis, int8 in, int8 out with scale 1/256 and zero point -128 (TFLite
// int8 softmax). Per row: d = x - max(x) <= 0 is rescaled by beta * input_scale into Q5
// (5 integer bits), exp(d) is evaluated in Q0 and summed in Q12 (12 integer bits, room for
// 4096 terms of at most 1.0), and each exp(d) is multiplied by 1/sum computed by fixed-point
// Newton-Raphson. Differences below diff_min underflow to probability 0.
#include "mcuflow/kernels/arith.h"
#include "mcuflow/kernels/kernels.h"

namespace mcuflow::kernels {

namespace {
// exp(d) in Q0 for a row element with d = x - max >= diff_min.
inline int32_t exp_of_diff(const SoftmaxParams& p, int32_t diff) {
  // diff * 2^left_shift stays below 2^31 because |diff| <= -diff_min (the compiler's radius).
  const int32_t d_q5 =
      sat_rounding_doubling_high_mul(wrapping_left_shift(diff, p.input_left_shift), p.input_multiplier);
  return exp_on_negative_values_q5(d_q5);
}
}  // namespace

void softmax_s8(const SoftmaxParams& p, const int8_t* input, int8_t* output) {
  for (int32_t r = 0; r < p.rows; ++r) {
    const int8_t* in = input + r * p.depth;
    int8_t* out = output + r * p.depth;

    int32_t max_v = -128;
    for (int32_t i = 0; i < p.depth; ++i) max_v = in[i] > max_v ? in[i] : max_v;

    int32_t sum_q12 = 0;
    for (int32_t i = 0; i < p.depth; ++i) {
      const int32_t diff = in[i] - max_v;
      if (diff >= p.diff_min) sum_q12 = fx_add(sum_q12, rounding_divide_by_pot(exp_of_diff(p, diff), 12));
    }

    // Normalise the sum to 1 + x, x in [0, 1) (Q0), times 2^bits_over_unit: the max element
    // contributes exp(0) = 1.0, so sum >= 1.0 and bits_over_unit >= 0.
    const int headroom_plus_one = count_leading_zeros(static_cast<uint32_t>(sum_q12));
    const int bits_over_unit = 12 - headroom_plus_one;
    const int32_t x = static_cast<int32_t>((static_cast<uint32_t>(sum_q12) << headroom_plus_one) -
                                           (uint32_t{1} << 31));
    const int32_t inv_sum = one_over_one_plus_x_for_x_in_0_1(x);  // Q0, = 2^bits_over_unit / sum

    // probability * 256 = exp * inv_sum / 2^bits_over_unit * 2^8, from a Q0 product.
    const int out_shift = bits_over_unit + 31 - 8;
    for (int32_t i = 0; i < p.depth; ++i) {
      const int32_t diff = in[i] - max_v;
      int32_t q = -128;
      if (diff >= p.diff_min) {
        const int32_t prod = fx_mul(inv_sum, exp_of_diff(p, diff));  // >= 0
        // A shift past 31 bits (exp sum >= 512, so every probability < 1/512) leaves less
        // than half an output step: exactly 0 after rounding. int32 shifts cannot go there.
        const int32_t scaled = out_shift > 31 ? 0 : rounding_divide_by_pot(prod, out_shift);
        q = clamp_i32(scaled - 128, -128, 127);
      }
      out[i] = static_cast<int8_t>(q);
    }
  }
}

}  // namespace mcuflow::kernels
