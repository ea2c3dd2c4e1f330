// Softmax, int16, Armv6-M (kernels_scalar.h): softmax_s16.h's steps, the exp pass (steps 1 and 2)
// in Thumb-1 assembly: d * M + 2^(k-1) as (max * M + 2^(k-1)) - x * M (equal mod 2^32, and the
// true value is below 2^32), the cap at 65535 on a branch taken only past the table's range, and
// lut_s16.h's blend as lo + ((hi - lo) * f + 64) >> 7; 24 instructions per value (GCC: 36).
#include "mcuflow/kernels/kernels_scalar.h"
#include "mcuflow/kernels/softmax_s16.h"

namespace mcuflow::kernels {
namespace {

// Steps 1 and 2 of a row of `depth` (>= 1) values whose largest is max_v: each exp value to
// `out`; returns their sum (step 3).
uint32_t exp_row(const SoftmaxS16Params& p, const int16_t* in, int32_t depth, int32_t max_v, const int16_t* table,
                 int16_t* out) {
  const int16_t* const in_end = in + depth;
  int16_t* const out_end = out + depth;
  const uint32_t multiplier = uint32_t(p.diff_multiplier);
  const uint32_t base = uint32_t(max_v) * multiplier + (uint32_t{1} << (p.diff_shift - 1));
  const uint32_t shift = uint32_t(p.diff_shift);
  int32_t offset = -2 * depth;  // bytes from the ends, up to 0
  uint32_t sum = 0;
  int32_t z, at, lo;
  __asm__ volatile(
      ".syntax unified\n\t"
      "1:\n\t"
      "ldrsh %[z], [%[in_end], %[offset]]\n\t"
      "mov %[at], %[multiplier]\n\t"
      "muls %[z], %[at], %[z]\n\t"
      "negs %[z], %[z]\n\t"
      "add %[z], %[base]\n\t"
      "lsrs %[z], %[z], %[shift]\n\t"
      "lsrs %[at], %[z], #16\n\t"
      "beq 2f\n\t"
      "movs %[z], #0\n\t"  // z = 65535
      "subs %[z], #1\n\t"
      "lsrs %[z], %[z], #16\n\t"
      "2:\n\t"
      "lsrs %[at], %[z], #7\n\t"
      "lsls %[at], %[at], #1\n\t"
      "ldrsh %[lo], [%[table], %[at]]\n\t"
      "adds %[at], #2\n\t"
      "ldrsh %[at], [%[table], %[at]]\n\t"  // hi
      "lsls %[z], %[z], #25\n\t"
      "lsrs %[z], %[z], #25\n\t"  // f
      "subs %[at], %[at], %[lo]\n\t"
      "muls %[at], %[z], %[at]\n\t"
      "adds %[at], #64\n\t"
      "asrs %[at], %[at], #7\n\t"
      "adds %[at], %[at], %[lo]\n\t"
      "strh %[at], [%[out_end], %[offset]]\n\t"
      "add %[sum], %[at]\n\t"
      "adds %[offset], #2\n\t"
      "bne 1b\n\t"
      : [offset] "+l"(offset), [sum] "+h"(sum), [z] "=&l"(z), [at] "=&l"(at), [lo] "=&l"(lo)
      : [in_end] "l"(in_end), [out_end] "l"(out_end), [table] "l"(table), [shift] "l"(shift),
        [multiplier] "h"(multiplier), [base] "h"(base)
      : "cc", "memory");
  return sum;
}

}  // namespace

void softmax_s16_scalar(const SoftmaxS16Params& p, const int16_t* input, const int16_t* exp_table, int16_t* output) {
  for (int32_t r = 0; r < p.rows; ++r) {
    const int16_t* in = input + r * p.depth;
    int16_t* out = output + r * p.depth;
    int32_t max_v = -32768;
    for (int32_t i = 0; i < p.depth; ++i) max_v = in[i] > max_v ? in[i] : max_v;
    const SoftmaxS16RowScale scale = softmax_s16_row_scale(exp_row(p, in, p.depth, max_v, exp_table, out));
    for (int32_t i = 0; i < p.depth; ++i) out[i] = softmax_s16_output(scale, uint32_t(out[i]));
  }
}

}  // namespace mcuflow::kernels
