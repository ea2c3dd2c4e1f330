// The scalar GEMM kernels' shared row routine (kernels_scalar.h): one input row of `depth`
// int8 values times every group of four output channels, requantized like the reference.
#pragma once
#include <cstdint>
#include "mcuflow/kernels/kernels_scalar.h"

namespace mcuflow::kernels::scalar {

// The output side of a requantization: channel oc's words are words + oc * kScalarRequantWords.
struct Requant {
  const int32_t* words;
  int32_t output_offset, act_min, act_max;
};

// scalar_requantize(acc, q) (kernels_scalar.h) written out: GCC spills its eight live values
// around the four products and re-derives the rounding constants; here 36 instructions.
inline int32_t requantize_words(int32_t acc, const int32_t* q) {
  int32_t xh, xl, ml, mh, t;
  __asm__(".syntax unified\n\t"
          "ldr %[t], [%[q], #8]\n\t"
          "lsls %[x], %[x], %[t]\n\t"  // x = acc << left
          "asrs %[xh], %[x], #16\n\t"
          "uxth %[xl], %[x]\n\t"
          "ldr %[ml], [%[q], #0]\n\t"
          "ldr %[mh], [%[q], #4]\n\t"
          "movs %[t], %[xl]\n\t"
          "muls %[t], %[ml], %[t]\n\t"  // lo
          "lsrs %[t], %[t], #16\n\t"
          "muls %[xl], %[mh], %[xl]\n\t"  // c2
          "adds %[t], %[t], %[xl]\n\t"
          "movs %[xl], #1\n\t"
          "lsls %[xl], %[xl], #14\n\t"
          "adds %[t], %[t], %[xl]\n\t"  // u
          "muls %[ml], %[xh], %[ml]\n\t"  // c1
          "muls %[mh], %[xh], %[mh]\n\t"
          "lsls %[mh], %[mh], #1\n\t"  // 2 * xh * mh
          "lsrs %[xh], %[t], #15\n\t"
          "adds %[mh], %[mh], %[xh]\n\t"
          "lsls %[t], %[t], #17\n\t"
          "lsrs %[t], %[t], #17\n\t"
          "adds %[t], %[t], %[ml]\n\t"
          "asrs %[t], %[t], #15\n\t"
          "adds %[x], %[mh], %[t]\n\t"  // the high multiply
          "ldr %[ml], [%[q], #12]\n\t"  // rounding_divide_by_pot by e = right shift
          "movs %[mh], #1\n\t"
          "lsls %[mh], %[mh], %[ml]\n\t"
          "subs %[mh], %[mh], #1\n\t"  // mask
          "movs %[xl], %[x]\n\t"
          "ands %[xl], %[xl], %[mh]\n\t"  // remainder
          "lsrs %[mh], %[mh], #1\n\t"
          "lsrs %[t], %[x], #31\n\t"
          "adds %[mh], %[mh], %[t]\n\t"  // threshold
          "asrs %[x], %[x], %[ml]\n\t"
          "cmp %[xl], %[mh]\n\t"
          "ble 1f\n\t"
          "adds %[x], %[x], #1\n\t"
          "1:\n\t"
          ".syntax divided"
          : [x] "+l"(acc), [xh] "=&l"(xh), [xl] "=&l"(xl), [ml] "=&l"(ml), [mh] "=&l"(mh), [t] "=&l"(t)
          : [q] "l"(q), "m"(*reinterpret_cast<const int32_t(*)[kScalarRequantWords]>(q))  // reads q[0..3]
          : "cc");
  return acc;
}

inline int8_t requantize(int32_t acc, const Requant& r, int32_t oc) {
  const int32_t v = requantize_words(acc, r.words + oc * kScalarRequantWords) + r.output_offset;
  return int8_t(clamp_i32(v, r.act_min, r.act_max));
}

// One window position of a group: x = row[k], four LDRB weights at byte `offset` of w, four
// products added to a0..a3 (r8-r11), 13 instructions. Thumb-1 assembly (unified syntax).
#define MCUFLOW_SCALAR_TAP(offset)                  \
  "ldrsb %[x], [%[row_end], %[k]]\n\t"              \
  "ldrb %[w0], [%[w], #" #offset "]\n\t"            \
  "ldrb %[w1], [%[w], #" #offset " + 1]\n\t"        \
  "ldrb %[w2], [%[w], #" #offset " + 2]\n\t"        \
  "ldrb %[w3], [%[w], #" #offset " + 3]\n\t"        \
  "muls %[w0], %[x], %[w0]\n\t"                     \
  "muls %[w1], %[x], %[w1]\n\t"                     \
  "muls %[w2], %[x], %[w2]\n\t"                     \
  "muls %[w3], %[x], %[w3]\n\t"                     \
  "add %[a0], %[w0]\n\t"                            \
  "add %[a1], %[w1]\n\t"                            \
  "add %[a2], %[w2]\n\t"                            \
  "add %[a3], %[w3]\n\t"

#define MCUFLOW_SCALAR_TAP_NEXT(offset) MCUFLOW_SCALAR_TAP(offset) "adds %[k], %[k], #1\n\t"

#define MCUFLOW_SCALAR_OPERANDS(end)                                                                        \
  : [a0] "+h"(a0), [a1] "+h"(a1), [a2] "+h"(a2), [a3] "+h"(a3), [k] "+l"(k), [w] "+l"(w), [x] "=&l"(x),    \
    [w0] "=&l"(w0), [w1] "=&l"(w1), [w2] "=&l"(w2), [w3] "=&l"(w3)                                         \
  : [row_end] "l"(end)                                                                                      \
  : "cc", "memory"

// a0..a3 += sum over the row's `count` values ending at row_end of x * (weight byte), weights
// interleaved four per value from w (advanced past them). GCC keeps the accumulators on the
// stack and re-derives addresses here, so the loop is written out: eight values per pass
// (the weight offsets fill LDRB's 5-bit immediate), then one at a time.
inline void group_dot(const int8_t* row_end, int32_t count, const int8_t*& w, int32_t& a0, int32_t& a1,
                      int32_t& a2, int32_t& a3) {
  int32_t x, w0, w1, w2, w3;
  const int32_t eights = count & ~7;
  if (eights) {
    int32_t k = -eights;
    const int8_t* const end8 = row_end - (count - eights);  // the tail follows the eights
    __asm__(".syntax unified\n\t"
            "1:\n\t" MCUFLOW_SCALAR_TAP_NEXT(0) MCUFLOW_SCALAR_TAP_NEXT(4) MCUFLOW_SCALAR_TAP_NEXT(8)
                MCUFLOW_SCALAR_TAP_NEXT(12) MCUFLOW_SCALAR_TAP_NEXT(16) MCUFLOW_SCALAR_TAP_NEXT(20)
                    MCUFLOW_SCALAR_TAP_NEXT(24) MCUFLOW_SCALAR_TAP(28)
            "adds %[w], %[w], #32\n\t"
            "adds %[k], %[k], #1\n\t"
            "bne 1b\n\t"
            ".syntax divided" MCUFLOW_SCALAR_OPERANDS(end8));
  }
  if (count - eights) {
    int32_t k = eights - count;
    __asm__(".syntax unified\n\t"
            "1:\n\t" MCUFLOW_SCALAR_TAP(0)
            "adds %[w], %[w], #4\n\t"
            "adds %[k], %[k], #1\n\t"
            "bne 1b\n\t"
            ".syntax divided" MCUFLOW_SCALAR_OPERANDS(row_end));
  }
}

#undef MCUFLOW_SCALAR_OPERANDS
#undef MCUFLOW_SCALAR_TAP_NEXT
#undef MCUFLOW_SCALAR_TAP

// out[0..out_c) for one input row of `depth` values: bias' - 128 * sum(row) plus the row times
// each group's weights (the prepared input, kernels_scalar.h), requantized.
inline void gemm_row(const int8_t* row, int32_t depth, int32_t out_c, const int32_t* prepared, const Requant& r,
                     int8_t* out) {
  const int32_t* folded_bias = prepared;  // then r.words, then the grouped weights
  int32_t row_sum = 0;
  for (int32_t k = 0; k < depth; ++k) row_sum += row[k];
  const uint32_t correction = uint32_t(row_sum) * uint32_t(-128);
  const int8_t* w = reinterpret_cast<const int8_t*>(prepared + out_c * (1 + kScalarRequantWords));
  for (int32_t oc = 0; oc < out_c; oc += kScalarGroup) {
    const int32_t last = out_c - 1;
    const int32_t c1 = oc + 1 < out_c ? oc + 1 : last, c2 = oc + 2 < out_c ? oc + 2 : last,
                  c3 = oc + 3 < out_c ? oc + 3 : last;
    int32_t a0 = int32_t(uint32_t(folded_bias[oc]) + correction), a1 = int32_t(uint32_t(folded_bias[c1]) + correction),
            a2 = int32_t(uint32_t(folded_bias[c2]) + correction), a3 = int32_t(uint32_t(folded_bias[c3]) + correction);
    group_dot(row + depth, depth, w, a0, a1, a2, a3);
    const int32_t acc[kScalarGroup] = {a0, a1, a2, a3};
    const int32_t lanes = out_c - oc < kScalarGroup ? out_c - oc : kScalarGroup;
#pragma GCC unroll 1  // one requantization body: flash matters more than the loop's branch
    for (int32_t lane = 0; lane < lanes; ++lane) out[oc + lane] = requantize(acc[lane], r, oc + lane);
  }
}

}  // namespace mcuflow::kernels::scalar
