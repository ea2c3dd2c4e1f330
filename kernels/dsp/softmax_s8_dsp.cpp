// Softmax, int8, DSP extension: the row maximum four bytes at a time (SSUB8 sets a GE flag per
// byte where the input is at least the running maximum, SEL keeps the larger bytes), exp(x - max)
// from the prepared table (softmax_table.h), and each output from one UMLAL.
//
// Why one UMLAL gives the reference's output: for exp e and inv_sum v, both in [0, 2^31), and
// s = out_shift in [23, 31] (softmax_table.h), the reference computes
// round_half_up(round_half_up(e * v / 2^31) / 2^s); both roundings are floors of a sum, and nested
// floors of divisions by powers of two compose, so it equals
// floor((e * v + 2^30 + 2^(s+30)) / 2^(s+31)): the high word of the unsigned 64-bit
// e * v + (2^(s-2) * 2^32 + 2^30) shifted right by s - 1 (no carry out: the sum is below 2^63).
#include <arm_acle.h>

#include <cstring>

#include "mcuflow/kernels/kernels_dsp.h"
#include "mcuflow/kernels/softmax_table.h"

namespace mcuflow::kernels {
namespace {

int32_t row_max(const int8_t* in, int32_t depth) {
  uint32_t max4 = 0x80808080u;  // four lanes of -128
  int32_t i = 0;
  for (; i + 4 <= depth; i += 4) {
    uint32_t x4;
    std::memcpy(&x4, in + i, 4);
    __ssub8(x4, max4);  // GE per byte: x >= max
    max4 = __sel(x4, max4);
  }
  int32_t max_v = -128;
  for (int32_t lane = 0; lane < 4; ++lane) {
    const int32_t m = int8_t(max4 >> (8 * lane));
    max_v = m > max_v ? m : max_v;
  }
  for (; i < depth; ++i) max_v = in[i] > max_v ? in[i] : max_v;
  return max_v;
}

}  // namespace

void softmax_s8_dsp(const SoftmaxParams& p, const int8_t* input, const int32_t* exp_table, int8_t* output) {
  const int32_t depth = p.depth;
  for (int32_t r = 0; r < p.rows; ++r, input += depth, output += depth) {
    const int32_t offset = kSoftmaxTableMaxIndex - row_max(input, depth);  // exp(x - max) = exp_table[x + offset]
    const SoftmaxRowScale scale = softmax_row_scale(softmax_table_row_sum(exp_table, input, depth, offset));
    if (scale.out_shift > 31) {  // every probability rounds to 0
      std::memset(output, -128, size_t(depth));
      continue;
    }
    const uint64_t rounding = (uint64_t{1} << (scale.out_shift + 30)) + (uint64_t{1} << 30);
    const uint32_t inv_sum = uint32_t(scale.inv_sum);
    const int32_t down = scale.out_shift - 1;
    for (int32_t i = 0; i < depth; ++i) {
      const uint64_t acc = uint64_t(uint32_t(exp_table[input[i] + offset])) * inv_sum + rounding;
      const uint32_t q = uint32_t(acc >> 32) >> down;  // in [0, 256]
      output[i] = int8_t(__usat(int32_t(q), 8) - 128);
    }
  }
}

}  // namespace mcuflow::kernels
