// Softmax over the last axis, int8 in, int8 out with scale 1/256 and zero point -128 (TFLite
// int8 softmax). Per row: d = x - max(x) <= 0 is rescaled by beta * input_scale into Q5
// (5 integer bits), exp(d) is evaluated in Q0 and summed in Q12 (12 integer bits, room for
// 4096 terms of at most 1.0), and each exp(d) is multiplied by 1/sum computed by fixed-point
// Newton-Raphson. Differences below diff_min underflow to probability 0. The steps are
// softmax_table.h's, which the tier kernels share.
#include "mcuflow/kernels/kernels.h"
#include "mcuflow/kernels/softmax_table.h"

namespace mcuflow::kernels {

void softmax_s8(const SoftmaxParams& p, const int8_t* input, int8_t* output) {
  for (int32_t r = 0; r < p.rows; ++r) {
    const int8_t* in = input + r * p.depth;
    int8_t* out = output + r * p.depth;

    int32_t max_v = -128;
    for (int32_t i = 0; i < p.depth; ++i) max_v = in[i] > max_v ? in[i] : max_v;

    int32_t sum_q12 = 0;
    for (int32_t i = 0; i < p.depth; ++i) {
      const int32_t diff = in[i] - max_v;
      if (diff >= p.diff_min) sum_q12 = fx_add(sum_q12, softmax_sum_term(softmax_exp_of_diff(p, diff)));
    }

    const SoftmaxRowScale scale = softmax_row_scale(sum_q12);
    for (int32_t i = 0; i < p.depth; ++i) {
      const int32_t diff = in[i] - max_v;
      out[i] = diff >= p.diff_min ? softmax_output(scale, softmax_exp_of_diff(p, diff)) : int8_t{-128};
    }
  }
}

}  // namespace mcuflow::kernels
