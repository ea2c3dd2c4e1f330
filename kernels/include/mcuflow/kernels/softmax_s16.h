// softmax_s16's arithmetic in the pieces every tier shares (kernels/reference/softmax_s16.cpp,
// kernels/<tier>/softmax_s16_<tier>.cpp). All of it is unsigned 32-bit integer arithmetic.
//
// Per row, with m = max(row) and d = m - x (0..65535) for each element x:
//   1. z = min(65535, (d * diff_multiplier + 2^(diff_shift - 1)) >> diff_shift): the real
//      difference d * input_scale as a fraction of kSoftmaxS16ExpRange, in 16 bits;
//   2. e = lut_s16_at(exp_table, z) (lut_s16.h), in [0, 32767]: the compiler's exp table holds
//      round(32768 * exp(-kSoftmaxS16ExpRange * i / 512)), at most 32767, and e(d = 0) = 32767;
//   3. sum = the row's e (below 2^31: depth <= kSoftmaxS16MaxDepth, sum >= 32767);
//   4. with c = clz(sum) (1..17), the top 16 bits of the sum s16 = (sum << c) >> 16 (2^15..2^16 - 1),
//      inv = 2^31 / s16 (2^15..2^16) and shift = 32 - c (15..31);
//   5. out = min(32767, (e * inv + 2^(shift - 1)) >> shift) ~ 32768 * e / sum: e * inv <= 32767 *
//      2^16 and the rounding term <= 2^30, so the sum stays below 2^32.
#pragma once
#include <cstdint>

#include "mcuflow/kernels/arith.h"
#include "mcuflow/kernels/lut_s16.h"
#include "mcuflow/kernels/params.h"

namespace mcuflow::kernels {

constexpr double kSoftmaxS16ExpRange = 12.0;  // exp(-12) * 32768 < 0.2: the table's last entries are 0
constexpr int32_t kSoftmaxS16MaxDepth = 65536;
constexpr int32_t kSoftmaxS16OutputMax = 32767;

// Step 1: the exp table's input for difference d = max - x.
inline uint32_t softmax_s16_table_input(const SoftmaxS16Params& p, uint32_t d) {
  const uint32_t z = (d * uint32_t(p.diff_multiplier) + (uint32_t{1} << (p.diff_shift - 1))) >> p.diff_shift;
  return z < 65535u ? z : 65535u;
}


struct SoftmaxS16RowScale {
  uint32_t inv;    // 2^31 / (the sum's top 16 bits)
  int32_t shift;   // 15..31
};

// Step 4, from the row's sum of exp (step 3).
inline SoftmaxS16RowScale softmax_s16_row_scale(uint32_t sum) {
  const int c = count_leading_zeros(sum);
  const uint32_t top = (sum << c) >> 16;
  return {(uint32_t{1} << 31) / top, 32 - c};
}

// Step 5.
inline int16_t softmax_s16_output(const SoftmaxS16RowScale& s, uint32_t e) {
  const uint32_t out = (e * s.inv + (uint32_t{1} << (s.shift - 1))) >> s.shift;
  return int16_t(out < uint32_t(kSoftmaxS16OutputMax) ? out : uint32_t(kSoftmaxS16OutputMax));
}

// Every row in steps 1 to 5, exp_at(z) giving lut_s16_at(exp_table, z) (a tier's own way of
// interpolating the same bits). Each row's exp values go to the output first (they fit int16)
// and are scaled there, so each element is read once before it is written: in place is fine.
template <typename ExpAt>
void softmax_s16_rows(const SoftmaxS16Params& p, const int16_t* input, int16_t* output, ExpAt exp_at) {
  for (int32_t r = 0; r < p.rows; ++r) {
    const int16_t* in = input + r * p.depth;
    int16_t* out = output + r * p.depth;
    int32_t max_v = -32768;
    for (int32_t i = 0; i < p.depth; ++i) max_v = in[i] > max_v ? in[i] : max_v;
    uint32_t sum = 0;
    for (int32_t i = 0; i < p.depth; ++i) {
      const uint32_t e = uint32_t(exp_at(softmax_s16_table_input(p, uint32_t(max_v - in[i]))));
      out[i] = int16_t(e);
      sum += e;
    }
    const SoftmaxS16RowScale scale = softmax_s16_row_scale(sum);
    for (int32_t i = 0; i < p.depth; ++i) out[i] = softmax_s16_output(scale, uint32_t(out[i]));
  }
}

}  // namespace mcuflow::kernels
