// Softmax, int8, Armv6-M: exp(x - max) from the prepared table (softmax_table.h), so per element
// one load, and in the output pass one 16x16-bit MULS instead of the reference's 64-bit
// product, with the exact product only where the short one cannot decide the rounding.
//
// Why the short product is exact when it is used. The reference's output before the -128 is
// r = round_half_up(round_half_up(e * v / 2^31) / 2^s) for exp e and inv_sum v, both in
// [0, 2^31), s = out_shift in [23, 31] (softmax_table.h); both roundings are floors of a sum,
// and nested floors of divisions by powers of two compose, so
//   r = floor((e * v + 2^30 + 2^(s+30)) / 2^(s+31)).
// Split e = eh * 2^16 + el, v = vh * 2^16 + vl (eh, vh < 2^15; el, vl < 2^16). Then
//   e * v + 2^30 = eh * vh * 2^32 + f * 2^32,  f = ((eh * vl + el * vh) * 2^16 + el * vl + 2^30) / 2^32,
// and 0 <= f < (2^32 * 2^16 + 2^32 + 2^30) / 2^32 < 2^16 + 2, so with t = eh * vh + 2^(s-2)
// (below 2^30 + 2^29: no overflow) r = floor((t + f) / 2^(s-1)) lies between floor(t / 2^(s-1))
// and floor((t + 2^16 + 1) / 2^(s-1)). These are equal unless t's low s-1 bits exceed
// 2^(s-1) - 2^16 - 2 (for s >= 23 a fraction of at most 2^-5 of the values); only then does
// the kernel compute the reference's 64-bit expression.
#include <cstring>

#include "mcuflow/kernels/kernels_scalar.h"
#include "mcuflow/kernels/softmax_table.h"

namespace mcuflow::kernels {

void softmax_s8_scalar(const SoftmaxParams& p, const int8_t* input, const int32_t* exp_table, int8_t* output) {
  const int32_t depth = p.depth;
  for (int32_t r = 0; r < p.rows; ++r, input += depth, output += depth) {
    int32_t max_v = -128;
    for (int32_t i = 0; i < depth; ++i) max_v = input[i] > max_v ? input[i] : max_v;
    const int32_t offset = kSoftmaxTableMaxIndex - max_v;  // exp(x - max) = exp_table[x + offset]
    const SoftmaxRowScale scale = softmax_row_scale(softmax_table_row_sum(exp_table, input, depth, offset));
    if (scale.out_shift > 31) {  // every probability rounds to 0
      std::memset(output, -128, size_t(depth));
      continue;
    }
    const uint32_t inv_high = uint32_t(scale.inv_sum) >> 16;
    const uint32_t half = 1u << (scale.out_shift - 2);
    const int32_t down = scale.out_shift - 1;
    const uint32_t low_bits = (1u << down) - 1, undecided_above = low_bits - (1u << 16) - 1;
    for (int32_t i = 0; i < depth; ++i) {
      const int32_t e = exp_table[input[i] + offset];
      const uint32_t t = (uint32_t(e) >> 16) * inv_high + half;
      if ((t & low_bits) > undecided_above) {
        output[i] = softmax_output(scale, e);
      } else {
        const int32_t q = int32_t(t >> down);  // in [0, 256]
        output[i] = int8_t(q > 255 ? 127 : q - 128);
      }
    }
  }
}

}  // namespace mcuflow::kernels
