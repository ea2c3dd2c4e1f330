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

// scalar_requantize(acc, q) (kernels_scalar.h). Armv6-M (M0/M0+, and the M23's Armv8-M Baseline)
// multiplies 32x32 -> 32 only: written out, as GCC spills its eight live values around the four
// products and re-derives the rounding constants; here 32 instructions in five registers, x = acc in,
// the result out. Cores with SMULL (Armv7-M on) compute the reference's formula from the same words, a
// third of that.
#if defined(__ARM_ARCH_6M__) || defined(__ARM_ARCH_8M_BASE__)
#define MCUFLOW_SCALAR_MULTIPLY_32
#endif
#ifdef MCUFLOW_SCALAR_MULTIPLY_32
#define MCUFLOW_SCALAR_REQUANT_WORDS                                           \
  "ldr %[xl], [%[q], #8]\n\t"                                                  \
  "lsls %[x], %[x], %[xl]\n\t" /* x = acc << left */                           \
  "asrs %[xh], %[x], #16\n\t"                                                  \
  "uxth %[xl], %[x]\n\t" /* x is free from here: the sum u */                  \
  "ldr %[ml], [%[q], #0]\n\t"                                                  \
  "ldr %[mh], [%[q], #4]\n\t"                                                  \
  "movs %[x], %[xl]\n\t"                                                       \
  "muls %[x], %[ml], %[x]\n\t" /* lo */                                        \
  "lsrs %[x], %[x], #16\n\t"                                                   \
  "muls %[xl], %[mh], %[xl]\n\t" /* c2 */                                      \
  "adds %[x], %[x], %[xl]\n\t"                                                 \
  "ldr %[xl], [%[q], #20]\n\t" /* 2^14 */                                      \
  "adds %[x], %[x], %[xl]\n\t" /* u */                                         \
  "muls %[ml], %[xh], %[ml]\n\t" /* c1 */                                      \
  "muls %[mh], %[xh], %[mh]\n\t"                                               \
  "lsls %[mh], %[mh], #1\n\t" /* 2 * xh * mh */                                \
  "lsrs %[xh], %[x], #15\n\t"                                                  \
  "adds %[mh], %[mh], %[xh]\n\t"                                               \
  "lsls %[x], %[x], #17\n\t"                                                   \
  "lsrs %[x], %[x], #17\n\t"                                                   \
  "adds %[x], %[x], %[ml]\n\t"                                                 \
  "asrs %[x], %[x], #15\n\t"                                                   \
  "adds %[x], %[mh], %[x]\n\t" /* the high multiply */                         \
  "ldr %[ml], [%[q], #12]\n\t" /* rounding_divide_by_pot by e = right shift */ \
  "ldr %[mh], [%[q], #16]\n\t" /* mask */                                      \
  "movs %[xl], %[x]\n\t"                                                       \
  "ands %[xl], %[xl], %[mh]\n\t" /* remainder */                               \
  "lsrs %[mh], %[mh], #1\n\t"                                                  \
  "lsrs %[xh], %[x], #31\n\t"                                                  \
  "adds %[mh], %[mh], %[xh]\n\t" /* threshold */                               \
  "asrs %[x], %[x], %[ml]\n\t"                                                 \
  "cmp %[xl], %[mh]\n\t"                                                       \
  "ble 1f\n\t"                                                                 \
  "adds %[x], %[x], #1\n\t"                                                    \
  "1:\n\t"
#define MCUFLOW_SCALAR_REQUANT_TEMPS [xh] "=&l"(xh), [xl] "=&l"(xl), [ml] "=&l"(ml), [mh] "=&l"(mh)

inline int32_t requantize_words(int32_t acc, const int32_t* q) {
  int32_t xh, xl, ml, mh;
  __asm__(".syntax unified\n\t" MCUFLOW_SCALAR_REQUANT_WORDS ".syntax divided"
          : [x] "+l"(acc), MCUFLOW_SCALAR_REQUANT_TEMPS
          : [q] "l"(q), "m"(*reinterpret_cast<const int32_t(*)[kScalarRequantWords]>(q))  // reads q[0..3]
          : "cc");
  return acc;
}

// *out++ = the requantization of acc by words q (advanced to the next channel's), plus the output
// offset, clamped: one asm block, as GCC's code around requantize_words reloaded the offset and
// the bounds and spilled the output pointer (25 more instructions per output on qemu-m0).
inline void requantize_store(int32_t acc, const int32_t*& q, int8_t*& out, const Requant& r) {
  int32_t xh, xl, ml, mh;
  __asm__ volatile(  // the store is its effect
          ".syntax unified\n\t" MCUFLOW_SCALAR_REQUANT_WORDS
          "ldr %[xh], %[offset]\n\t"
          "adds %[x], %[x], %[xh]\n\t"
          "ldr %[xh], %[low]\n\t"
          "cmp %[x], %[xh]\n\t"
          "bge 2f\n\t"
          "movs %[x], %[xh]\n\t"
          "2:\n\t"
          "ldr %[xh], %[high]\n\t"
          "cmp %[x], %[xh]\n\t"
          "ble 3f\n\t"
          "movs %[x], %[xh]\n\t"
          "3:\n\t"
          "strb %[x], [%[out]]\n\t"
          "adds %[out], %[out], #1\n\t"
          "adds %[q], %[q], #4 * %c[words]\n\t"
          ".syntax divided"
          : [x] "+l"(acc), MCUFLOW_SCALAR_REQUANT_TEMPS, [q] "+l"(q), [out] "+l"(out)
          : [offset] "m"(r.output_offset), [low] "m"(r.act_min), [high] "m"(r.act_max),
            [words] "i"(kScalarRequantWords)
          : "cc", "memory");
}
#undef MCUFLOW_SCALAR_REQUANT_TEMPS
#undef MCUFLOW_SCALAR_REQUANT_WORDS
#else
inline int32_t requantize_words(int32_t acc, const int32_t* q) {
  const int32_t multiplier = int32_t(uint32_t(q[0]) | (uint32_t(q[1]) << 16));
  // m in [0, 2^31): sat_rounding_doubling_high_mul's one saturating case cannot occur.
  const int64_t product = int64_t(wrapping_left_shift(acc, q[2])) * multiplier;
  return rounding_divide_by_pot(int32_t((product + (int64_t{1} << 30)) >> 31), q[3]);
}

inline void requantize_store(int32_t acc, const int32_t*& q, int8_t*& out, const Requant& r) {
  *out++ = int8_t(clamp_i32(requantize_words(acc, q) + r.output_offset, r.act_min, r.act_max));
  q += kScalarRequantWords;
}
#endif

// A per-tensor requantization from params (the element-wise kernels): Armv6-M takes the words,
// cores with SMULL the reference's own formula.
struct TensorRequant {
  int32_t words[kScalarRequantWords];
  int32_t multiplier, shift, output_offset, act_min, act_max;
  TensorRequant(int32_t multiplier_, int32_t shift_, int32_t output_offset_, int32_t act_min_, int32_t act_max_)
      : multiplier(multiplier_), shift(shift_), output_offset(output_offset_), act_min(act_min_), act_max(act_max_) {
    for (int32_t j = 0; j < kScalarRequantWords; ++j) words[j] = scalar_requant_word(multiplier, shift, j);
  }
};

inline int8_t requantize(int32_t acc, const TensorRequant& t) {
#ifdef MCUFLOW_SCALAR_MULTIPLY_32
  const int32_t v = requantize_words(acc, t.words);
#else
  const int32_t v = multiply_by_quantized_multiplier(acc, t.multiplier, t.shift);
#endif
  return int8_t(clamp_i32(v + t.output_offset, t.act_min, t.act_max));
}

// Two window positions of a group (kernels_scalar.h) with inputs x0, x1 in registers: the four
// weight words of the pair by one LDM (r4-r7, as LDM needs ascending registers), four multiplies,
// the two positions' packed sums added into a0..a3 (PackedSums): 15 instructions for eight
// multiply-accumulates. Thumb-1 assembly (unified syntax).
#define MCUFLOW_SCALAR_PRODUCTS(x0, x1) \
  "ldmia %[w]!, {r4, r5, r6, r7}\n\t"   \
  "muls r4, " x0 ", r4\n\t"             \
  "muls r5, " x0 ", r5\n\t"             \
  "muls r6, " x1 ", r6\n\t"             \
  "muls r7, " x1 ", r7\n\t"             \
  "adds r4, r4, r6\n\t"                 \
  "adds r5, r5, r7\n\t"                 \
  MCUFLOW_SCALAR_SPLIT("r4", "r6", "a0", "a1") MCUFLOW_SCALAR_SPLIT("r5", "r7", "a2", "a3")
// An odd last window position x (one product per half: |P|, |Q| <= 128 * 127).
#define MCUFLOW_SCALAR_LAST(x)  \
  "ldmia %[w]!, {r4, r5}\n\t" \
  "muls r4, " x ", r4\n\t"    \
  "muls r5, " x ", r5\n\t"    \
  MCUFLOW_SCALAR_SPLIT("r4", "r6", "a0", "a1") MCUFLOW_SCALAR_SPLIT("r5", "r7", "a2", "a3")
// The loop's test: back to 1 until row reaches end.
#define MCUFLOW_SCALAR_LOOP_BACK \
  "ldr r6, %[end]\n\t"         \
  "cmp %[row], r6\n\t"         \
  "bne 1b\n\t"
// From an int8 row: x0 = row[offset], x1 = row[offset + 1] (19 instructions).
#define MCUFLOW_SCALAR_PAIR(offset)           \
  "ldrb %[x0], [%[row], #" #offset "]\n\t"     \
  "ldrb %[x1], [%[row], #" #offset " + 1]\n\t" \
  "sxtb %[x0], %[x0]\n\t"                     \
  "sxtb %[x1], %[x1]\n\t"                     \
  MCUFLOW_SCALAR_PRODUCTS("%[x0]", "%[x1]")
// From a widened (int32) row: both values by one LDM into r2, r3 (16 instructions).
#define MCUFLOW_SCALAR_WORD_PAIR "ldmia %[row]!, {r2, r3}\n\t" MCUFLOW_SCALAR_PRODUCTS("r2", "r3")

// A packed sum L + H * 2^16 (|L|, |H| <= 2 * 128 * 127 < 2^15) plus 2^15 has a low half in
// (0, 2^16), so its top half alone (ASRS #16) is H: a_all += the sum, a_hi += H (PackedSums).
#define MCUFLOW_SCALAR_SPLIT(sum, high, a_all, a_hi) \
  "add " sum ", %[half]\n\t"                         \
  "add %[" a_all "], " sum "\n\t"                    \
  "asrs " high ", " sum ", #16\n\t"                  \
  "add %[" a_hi "], " high "\n\t"

#define MCUFLOW_SCALAR_OPERANDS                                                                             \
  : [a0] "+h"(a0), [a1] "+h"(a1), [a2] "+h"(a2), [a3] "+h"(a3), [row] "+l"(row), [w] "+l"(w),              \
    [x0] "=&l"(x0), [x1] "=&l"(x1)                                                                         \
  : [end] "m"(end), [half] "h"(int32_t{1} << 15)                                                          \
  : "r4", "r5", "r6", "r7", "cc", "memory"

// The accumulators of a group while its packed sums run: per pair of channels (a, b), all = the
// sum of every packed sum plus 2^15 each (mod 2^32) and high = the sum of their high halves, from
// which low = all - high * 2^16 - 2^15 * sums. Starting all at a + b * 2^16 - 2^15 * sums
// (sums = ceil(depth / 2), one per pair of positions and one for an odd last) gives the two
// channels' accumulators a + their low halves, b + their high halves.
struct PackedSums {
  int32_t all0, high0, all1, high1;  // channels (0, 1), (2, 3) of the group

  PackedSums(const int32_t* start, int32_t depth) {
    const uint32_t halves = uint32_t((depth + 1) >> 1) << 15;
    all0 = int32_t(uint32_t(start[0]) + (uint32_t(start[1]) << 16) - halves);
    all1 = int32_t(uint32_t(start[2]) + (uint32_t(start[3]) << 16) - halves);
    high0 = start[1];
    high1 = start[3];
  }
  int32_t low0() const { return int32_t(uint32_t(all0) - (uint32_t(high0) << 16)); }
  int32_t low1() const { return int32_t(uint32_t(all1) - (uint32_t(high1) << 16)); }
};

// a0..a3 (a PackedSums' all0, high0, all1, high1) += the row's `depth` values times the group's
// weight words from w (advanced past them): four pairs per pass, then single pairs, then an odd
// last value.
inline void group_dot(const int8_t* row, int32_t depth, const int32_t*& w, int32_t& a0, int32_t& a1, int32_t& a2,
                      int32_t& a3) {
  int32_t x0, x1;
  const int8_t* const fours_end = row + (depth & ~7);
  const int8_t* const pairs_end = row + (depth & ~1);
  if (row != fours_end) {
    const int8_t* const end = fours_end;
    __asm__(".syntax unified\n\t"
            "1:\n\t" MCUFLOW_SCALAR_PAIR(0) MCUFLOW_SCALAR_PAIR(2) MCUFLOW_SCALAR_PAIR(4) MCUFLOW_SCALAR_PAIR(6)
            "adds %[row], %[row], #8\n\t"
            MCUFLOW_SCALAR_LOOP_BACK
            ".syntax divided" MCUFLOW_SCALAR_OPERANDS);
  }
  if (row != pairs_end) {
    const int8_t* const end = pairs_end;
    __asm__(".syntax unified\n\t"
            "1:\n\t" MCUFLOW_SCALAR_PAIR(0)
            "adds %[row], %[row], #2\n\t"
            MCUFLOW_SCALAR_LOOP_BACK
            ".syntax divided" MCUFLOW_SCALAR_OPERANDS);
  }
  if (depth & 1) {  // one product per half: |P|, |Q| <= 128 * 127
    const int8_t* const end = row;
    __asm__(".syntax unified\n\t"
            "ldrb %[x0], [%[row], #0]\n\t"
            "sxtb %[x0], %[x0]\n\t"
            MCUFLOW_SCALAR_LAST("%[x0]")
            ".syntax divided" MCUFLOW_SCALAR_OPERANDS);
  }
}

#define MCUFLOW_SCALAR_WORD_OPERANDS                                                                        \
  : [a0] "+h"(a0), [a1] "+h"(a1), [a2] "+h"(a2), [a3] "+h"(a3), [row] "+l"(row), [w] "+l"(w)              \
  : [end] "m"(end), [half] "h"(int32_t{1} << 15)                                                          \
  : "r2", "r3", "r4", "r5", "r6", "r7", "cc", "memory"

// The same from a widened row (widen_row): LDM loads two values, which the int8 row's LDRB and
// SXTB took four instructions for, in every group's pass.
inline void group_dot(const int32_t* row, int32_t depth, const int32_t*& w, int32_t& a0, int32_t& a1, int32_t& a2,
                      int32_t& a3) {
  const int32_t* const fours_end = row + (depth & ~7);
  const int32_t* const pairs_end = row + (depth & ~1);
  if (row != fours_end) {
    const int32_t* const end = fours_end;
    __asm__(".syntax unified\n\t"
            "1:\n\t" MCUFLOW_SCALAR_WORD_PAIR MCUFLOW_SCALAR_WORD_PAIR MCUFLOW_SCALAR_WORD_PAIR MCUFLOW_SCALAR_WORD_PAIR
            MCUFLOW_SCALAR_LOOP_BACK
            ".syntax divided" MCUFLOW_SCALAR_WORD_OPERANDS);
  }
  if (row != pairs_end) {
    const int32_t* const end = pairs_end;
    __asm__(".syntax unified\n\t"
            "1:\n\t" MCUFLOW_SCALAR_WORD_PAIR
            MCUFLOW_SCALAR_LOOP_BACK
            ".syntax divided" MCUFLOW_SCALAR_WORD_OPERANDS);
  }
  if (depth & 1) {  // one product per half: |P|, |Q| <= 128 * 127
    const int32_t* const end = row;
    __asm__(".syntax unified\n\t"
            "ldr r2, [%[row]]\n\t"
            MCUFLOW_SCALAR_LAST("r2")
            ".syntax divided" MCUFLOW_SCALAR_WORD_OPERANDS);
  }
}

#undef MCUFLOW_SCALAR_WORD_OPERANDS
#undef MCUFLOW_SCALAR_OPERANDS
#undef MCUFLOW_SCALAR_SPLIT
#undef MCUFLOW_SCALAR_WORD_PAIR
#undef MCUFLOW_SCALAR_PAIR
#undef MCUFLOW_SCALAR_PRODUCTS
#undef MCUFLOW_SCALAR_LAST
#undef MCUFLOW_SCALAR_LOOP_BACK

// row[i] = values[i], i < n: a GEMM row widened once (per pixel) for the passes of every group.
inline void widen_row(const int8_t* values, int32_t n, int32_t* row) {
  for (int32_t i = 0; i < n; ++i) row[i] = values[i];
}

// out[0..out_c) for one input row of `depth` values (int8, or widened: int32): each group's bias'
// plus the row times its weight words (the prepared input, kernels_scalar.h), requantized.
template <typename Value>
void gemm_row(const Value* row, int32_t depth, int32_t out_c, const int32_t* prepared, const Requant& r,
                     int8_t* out) {
  const int32_t* w = prepared + out_c * kScalarRequantWords;  // r.words come first
  for (int32_t oc = 0; oc < out_c; oc += kScalarGroup) {
    PackedSums s(w, depth);
    w += kScalarGroup;
    group_dot(row, depth, w, s.all0, s.high0, s.all1, s.high1);
    const int32_t a0 = s.low0(), a1 = s.high0, a2 = s.low1(), a3 = s.high1;
    const int32_t* q = r.words + oc * kScalarRequantWords;
    int8_t* o = out + oc;
    if (out_c - oc >= kScalarGroup) {  // the common case written out: GCC then keeps the accumulators in registers
      requantize_store(a0, q, o, r);
      requantize_store(a1, q, o, r);
      requantize_store(a2, q, o, r);
      requantize_store(a3, q, o, r);
    } else {
      const int32_t acc[kScalarGroup] = {a0, a1, a2, a3};
#pragma GCC unroll 1  // one more requantization body for a partial group
      for (int32_t lane = 0; lane < out_c - oc; ++lane) requantize_store(acc[lane], q, o, r);
    }
  }
}

}  // namespace mcuflow::kernels::scalar
