// Building blocks of the MVE kernels (Helium intrinsics, inline assembly), device builds only.
// Kernel-private: only kernels/mve/*.cpp include it; the portable contract (what each kernel
// takes, prepares and refuses) stays in mcuflow/kernels/kernels_mve.h, which host code reads.
#pragma once
#include "mcuflow/kernels/kernels_mve.h"
#include "mcuflow/kernels/lut_s16.h"
#include "mcuflow/kernels/mve_prepared.h"  // build_gemm_tables, build_pointwise_blocks: for the int4 kernels

#if defined(__ARM_FEATURE_MVE)
#include <arm_mve.h>

#include <type_traits>

// Building blocks shared by the MVE kernels (inline: each kernel is its own translation unit).
namespace mcuflow::kernels::mve {

// The reference requantization (arith.h multiply_by_quantized_multiplier, then output offset
// and clamp) of four lanes, whose multipliers, left shifts and minus right shifts are at byte
// offsets kMultiplierAt, kLeftShiftAt and kMinusRightShiftAt of `table`. VQRDMULH rounds
// exactly like sat_rounding_doubling_high_mul (half up, saturating INT32_MIN^2). VRSHL rounds
// half up too, so negative values are first stepped down by one (saturating) wherever a right
// shift happens: that makes ties go away from zero. In assembly so that the compiler keeps the
// steps of several accumulators apart instead of interleaving them into spills.
// Steps of the requantization below on the q register `acc`, written once for requantize and
// the two-row GEMM: `row` holds the table row the step needs, `fixup` is scratch, %q[lo] and
// %q[hi] hold the activation range.
#define MCUFLOW_MVE_RQ_SHIFT_LEFT(acc, row) "vshl.s32 " acc ", " acc ", " row "\n\t"
#define MCUFLOW_MVE_RQ_MULTIPLY(acc, row) "vqrdmulh.s32 " acc ", " acc ", " row "\n\t"
#define MCUFLOW_MVE_RQ_SHIFT_RIGHT(acc, row, fixup)    \
  "vand " fixup ", " acc ", " row "\n\t"              \
  "vshr.s32 " fixup ", " fixup ", #31\n\t"            \
  "vqadd.s32 " acc ", " acc ", " fixup "\n\t"         \
  "vrshl.s32 " acc ", " acc ", " row "\n\t"
// The same where every lane shifts right (row < 0): the sign alone says which lanes step down.
#define MCUFLOW_MVE_RQ_SHIFT_RIGHT_ALL(acc, row, fixup) \
  "vshr.s32 " fixup ", " acc ", #31\n\t"              \
  "vqadd.s32 " acc ", " acc ", " fixup "\n\t"         \
  "vrshl.s32 " acc ", " acc ", " row "\n\t"
#define MCUFLOW_MVE_RQ_OUTPUT(acc, offset)             \
  "vadd.i32 " acc ", " acc ", " offset "\n\t"         \
  "vmax.s32 " acc ", " acc ", %q[lo]\n\t"             \
  "vmin.s32 " acc ", " acc ", %q[hi]\n\t"

template <int32_t kMultiplierAt, int32_t kLeftShiftAt, int32_t kMinusRightShiftAt>
inline int32x4_t requantize(int32x4_t acc, const int32_t* table, int32_t output_offset, int32x4_t act_min,
                            int32x4_t act_max) {
  constexpr int32_t kEnd = (kMultiplierAt > kLeftShiftAt ? (kMultiplierAt > kMinusRightShiftAt ? kMultiplierAt : kMinusRightShiftAt)
                                                         : (kLeftShiftAt > kMinusRightShiftAt ? kLeftShiftAt : kMinusRightShiftAt)) + 16;
  int32x4_t row, fixup;
  asm("vldrw.32 %q[row], [%[table], %[left]]\n\t" MCUFLOW_MVE_RQ_SHIFT_LEFT("%q[acc]", "%q[row]")
      "vldrw.32 %q[row], [%[table], %[mult]]\n\t" MCUFLOW_MVE_RQ_MULTIPLY("%q[acc]", "%q[row]")
      "vldrw.32 %q[row], [%[table], %[right]]\n\t" MCUFLOW_MVE_RQ_SHIFT_RIGHT("%q[acc]", "%q[row]", "%q[fixup]")
      MCUFLOW_MVE_RQ_OUTPUT("%q[acc]", "%[offset]")
      : [acc] "+w"(acc), [row] "=&w"(row), [fixup] "=&w"(fixup)
      : [table] "r"(table), [mult] "i"(kMultiplierAt), [left] "i"(kLeftShiftAt), [right] "i"(kMinusRightShiftAt),
        [offset] "r"(output_offset), [lo] "w"(act_min), [hi] "w"(act_max),
        "m"(*reinterpret_cast<const int32_t(*)[kEnd / 4]>(table)));
  return acc;
}

// multiply_by_quantized_multiplier of four lanes with one multiplier and shift for all, after a
// left shift of `pre_shift` (wrapping, like the reference's successive left shifts): the steps
// of requantize above, with the shifts folded once per op (add_s8_mve, mul_s8_mve).
struct Rescale {
  int32_t pre_shift, multiplier, minus_right_shift;

  Rescale(int32_t pre, int32_t multiplier_q31, int32_t shift)
      : pre_shift(pre + (shift > 0 ? shift : 0)), multiplier(multiplier_q31), minus_right_shift(shift < 0 ? shift : 0) {}

  int32x4_t operator()(int32x4_t x) const {
    x = vqrdmulhq_n_s32(vshlq_r_s32(x, pre_shift), multiplier);
    x = vqaddq_s32(x, vshrq_n_s32(vandq_s32(x, vdupq_n_s32(minus_right_shift)), 31));
    return vrshlq_n_s32(x, minus_right_shift);
  }
};

// out[i] = op.combine(a[i], op.prepare(b[i])) for i < n (b_step 1), or with b[0] prepared once
// (b_step 0), four int32 lanes at a time, the tail predicated (add_s8_mve, mul_s8_mve). Each
// lane reads its inputs before its output is written, so the output may lie exactly over an input.
template <typename Op>
inline void binary_lanes(const Op& op, const int8_t* a, const int8_t* b, int32_t b_step, int8_t* out, int32_t n) {
  const int32x4_t b_fixed = op.prepare(vdupq_n_s32(*b));
  int32_t i = 0;
  for (; i + 4 <= n; i += 4) {
    const int32x4_t prepared_b = b_step ? op.prepare(vldrbq_s32(b + i)) : b_fixed;
    vstrbq_s32(out + i, op.combine(vldrbq_s32(a + i), prepared_b));
  }
  if (i < n) {
    const mve_pred16_t valid = vctp32q(uint32_t(n - i));
    const int32x4_t prepared_b = b_step ? op.prepare(vldrbq_z_s32(b + i, valid)) : b_fixed;
    vstrbq_p_s32(out + i, op.combine(vldrbq_z_s32(a + i, valid), prepared_b), valid);
  }
}

struct GemmArgs {
  int32_t depth;  // k
  int32_t out_c;
  const int8_t* weights;  // the reference weights, [out_c][depth]
  const uint8_t* tables;  // the prepared input: a channel table per block of four output channels
  int32_t output_offset, act_min, act_max;
  // Whether any channel's requantization shifts left: gemm_two_rows skips that step otherwise
  // (set by gemm_left_shifts: a shift by zero changes nothing).
  bool left_shifts = true;
};

// A GEMM block's channel table rows, byte offsets.
constexpr int32_t kGemmTableRow = kMveGemmBlock * 4;
constexpr int32_t kGemmBiasAt = kMveBiasFolded * kGemmTableRow, kGemmMultiplierAt = kMveMultiplier * kGemmTableRow,
                  kGemmLeftShiftAt = kMveLeftShift * kGemmTableRow,
                  kGemmMinusRightShiftAt = kMveMinusRightShift * kGemmTableRow;

// The 2x4 dot below reads the two rows through r1 and the four weight rows of a block through
// their own pointers r3, r5, r7, r9, each post-incremented by one chunk of 16, counting the
// depth left in r11; `op` is vmladav (the first chunk sets the accumulators) or vmladava
// (later chunks add). Accumulators live in the even core registers VMLADAV(A) requires:
// channel j of row 0 in r(2j), of row 1 in r(8 + 2j) (lr for j = 3). A chunk: the rows in q0
// and q1, each weight load feeding both.
#define MCUFLOW_MVE_2X4_CHUNK(op)                                               \
  "vldrb.8 q0, [r1], #16\n\t"                                                  \
  "vldrb.8 q1, [r1], #16\n\t"                                                  \
  "vldrb.8 q2, [r3], #16\n\t" op " r0, q0, q2\n\t" op " r8, q1, q2\n\t"        \
  "vldrb.8 q3, [r5], #16\n\t" op " r2, q0, q3\n\t" op " r10, q1, q3\n\t"       \
  "vldrb.8 q2, [r7], #16\n\t" op " r4, q0, q2\n\t" op " r12, q1, q2\n\t"       \
  "vldrb.8 q3, [r9], #16\n\t" op " r6, q0, q3\n\t" op " lr, q1, q3\n\t"
// The last chunk, partial (r11: 1 ... 15 bytes left): the weights are read only up to depth,
// their other lanes zeroed (the rows are whole chunks in the scratch; their tails then count
// for nothing).
#define MCUFLOW_MVE_2X4_PARTIAL_CHUNK(op)                                         \
  "vctp.8 r11\n\t"                                                              \
  "vldrb.8 q0, [r1]\n\t"                                                        \
  "vldrb.8 q1, [r1, #16]\n\t"                                                   \
  "vpstttt\n\t"                                                                 \
  "vldrbt.8 q2, [r3]\n\t"                                                       \
  "vldrbt.8 q3, [r5]\n\t"                                                       \
  "vldrbt.8 q4, [r7]\n\t"                                                       \
  "vldrbt.8 q5, [r9]\n\t"                                                       \
  op " r0, q0, q2\n\t" op " r8, q1, q2\n\t" op " r2, q0, q3\n\t" op " r10, q1, q3\n\t"   \
  op " r4, q0, q4\n\t" op " r12, q1, q4\n\t" op " r6, q0, q5\n\t" op " lr, q1, q5\n\t"

// The state of gemm_two_rows, which the assembly keeps on the stack (every core register holds
// the dot's operands): field offsets are fixed in the assembly text.
struct GemmPairFrame {
  const int8_t* pair;        // 0
  const int8_t* weights;     // 4: the block's first weight row
  int32_t depth;             // 8
  int32_t channels;          // 12: output channels from the block on
  const uint8_t* table;      // 16: the block's channel table
  int32_t output_offset;     // 20
  int8_t* out0;              // 24: the block's first output of row 0
  int8_t* out1;              // 28: of row 1
};
static_assert(sizeof(GemmPairFrame) == 32, "the assembly addresses the frame by these offsets");

// out0[oc] and out1[oc] for every output channel from a row pair interleaved by interleave_rows
// in the scratch (whole chunks, so a partial last chunk may read the rows unpredicated: the
// weights' inactive lanes are zeroed). Per block of four output channels: the 2x4 dot against
// the four reference weight rows (a last partial block repeats its last row: nothing past the
// weights is read), bias' added, requantized (each table row loaded once for both rows) and
// stored (a partial block only its channels). All in assembly: the dot needs every core
// register, so the block loop keeps its state in a stack frame instead of spilling around it.
// The assembly of gemm_two_rows, with or without the requantization's left shift.
#define MCUFLOW_MVE_GEMM_PAIR(left_shift_steps)                                                                         \
  asm volatile(                                                                                                         \
      "ldm %[f], {r0-r7}\n\t"                                                                                           \
      "push {r0-r7}\n"  /* the frame at sp */                                                                           \
      "5:\n\t"  /* block loop */                                                                                        \
      "ldrd r1, r3, [sp]\n\t"  /* pair, w0 */                                                                           \
      "ldrd r11, r0, [sp, #8]\n\t"  /* depth, channels */                                                               \
      "add r5, r3, r11\n\t"                                                                                             \
      "add r7, r5, r11\n\t"                                                                                             \
      "add r9, r7, r11\n\t"                                                                                             \
      "cmp r0, #4\n\t"                                                                                                  \
      "bge 6f\n\t"                                                                                                      \
      "cmp r0, #2\n\t"  /* a partial block: rows past out_c repeat the last one */                                      \
      "it lt\n\t"                                                                                                       \
      "movlt r5, r3\n\t"                                                                                                \
      "cmp r0, #3\n\t"                                                                                                  \
      "it lt\n\t"                                                                                                       \
      "movlt r7, r5\n\t"                                                                                                \
      "mov r9, r7\n"                                                                                                    \
      "6:\n\t"                                                                                                          \
      "add r0, r9, r11\n\t"  /* the next block's first row */                                                           \
      "str r0, [sp, #4]\n\t"                                                                                            \
  /* The dot; k (r11): depth left. */                                                                                   \
      "subs r11, r11, #16\n\t"                                                                                          \
      "blt 3f\n\t"                                                                                                      \
      MCUFLOW_MVE_2X4_CHUNK("vmladav.s8")                                                                               \
      "subs r11, r11, #16\n\t"                                                                                          \
      "blt 2f\n"                                                                                                        \
      "1:\n\t"                                                                                                          \
      MCUFLOW_MVE_2X4_CHUNK("vmladava.s8")                                                                              \
      "subs r11, r11, #16\n\t"                                                                                          \
      "bge 1b\n"                                                                                                        \
      "2:\n\t"                                                                                                          \
      "adds r11, r11, #16\n\t"  /* k: depth left, 0 ... 15 */                                                           \
      "beq 4f\n\t"                                                                                                      \
      MCUFLOW_MVE_2X4_PARTIAL_CHUNK("vmladava.s8")                                                                      \
      "b 4f\n"                                                                                                          \
      "3:\n\t"  /* depth < 16: one partial chunk */                                                                     \
      "adds r11, r11, #16\n\t"                                                                                          \
      MCUFLOW_MVE_2X4_PARTIAL_CHUNK("vmladav.s8")                                                                       \
      "4:\n\t"                                                                                                          \
  /* Lanes 0, 1 are the low doubleword of the q register, lanes 2, 3 the high one. */                                   \
      "vmov d8, r0, r2\n\t"  /* q4: row 0 */                                                                            \
      "vmov d9, r4, r6\n\t"                                                                                             \
      "vmov d10, r8, r10\n\t"  /* q5: row 1 */                                                                          \
      "vmov d11, r12, lr\n\t"                                                                                           \
      "ldrd r0, r1, [sp, #16]\n\t"  /* table, output offset */                                                          \
      "vldrw.32 q0, [r0, %[bias]]\n\t"                                                                                  \
      "vadd.i32 q4, q4, q0\n\t"                                                                                         \
      "vadd.i32 q5, q5, q0\n\t"                                                                                         \
      left_shift_steps                                                                                                  \
      "vldrw.32 q0, [r0, %[mult]]\n\t"                                                                                  \
      MCUFLOW_MVE_RQ_MULTIPLY("q4", "q0") MCUFLOW_MVE_RQ_MULTIPLY("q5", "q0")                                           \
      "vldrw.32 q0, [r0, %[right]]\n\t"                                                                                 \
      MCUFLOW_MVE_RQ_SHIFT_RIGHT("q4", "q0", "q1") MCUFLOW_MVE_RQ_SHIFT_RIGHT("q5", "q0", "q1")                         \
      MCUFLOW_MVE_RQ_OUTPUT("q4", "r1") MCUFLOW_MVE_RQ_OUTPUT("q5", "r1")                                               \
      "ldrd r2, r3, [sp, #24]\n\t"  /* out0, out1 */                                                                    \
      "ldr r4, [sp, #12]\n\t"  /* channels */                                                                           \
      "vctp.32 r4\n\t"  /* all four lanes unless the block is partial */                                                \
      "vpstt\n\t"                                                                                                       \
      "vstrbt.32 q4, [r2], #4\n\t"                                                                                      \
      "vstrbt.32 q5, [r3], #4\n\t"                                                                                      \
      "strd r2, r3, [sp, #24]\n\t"                                                                                      \
      "adds r0, r0, %[table_bytes]\n\t"                                                                                 \
      "str r0, [sp, #16]\n\t"                                                                                           \
      "subs r4, r4, #4\n\t"                                                                                             \
      "str r4, [sp, #12]\n\t"                                                                                           \
      "bgt 5b\n\t"                                                                                                      \
      "add sp, sp, #32"                                                                                                 \
      : [f] "+r"(f)                                                                                                     \
      : [lo] "w"(act_min), [hi] "w"(act_max), [table_bytes] "i"(MveGemmLayout{0, 0}.table_bytes()),                     \
        [bias] "i"(kGemmBiasAt), [mult] "i"(kGemmMultiplierAt), [left] "i"(kGemmLeftShiftAt),                           \
        [right] "i"(kGemmMinusRightShiftAt), "m"(frame)                                                                 \
      : "r0", "r1", "r2", "r3", "r4", "r5", "r6", "r7", "r9", "r10", "r11", "r12", "lr", "q0", "q1", "q2", "q3", "q4",  \
        "q5", "p0", "cc", "memory")

inline void gemm_two_rows(const GemmArgs& g, const int8_t* pair, int8_t* out0, int8_t* out1) {
  GemmPairFrame frame{pair, g.weights, g.depth, g.out_c, g.tables, g.output_offset, out0, out1};
  register GemmPairFrame* f asm("r8") = &frame;  // the one register the loop leaves untouched until the frame is pushed
  const int32x4_t act_min = vdupq_n_s32(g.act_min), act_max = vdupq_n_s32(g.act_max);
  if (g.left_shifts) {
    MCUFLOW_MVE_GEMM_PAIR("vldrw.32 q0, [r0, %[left]]\n\t" MCUFLOW_MVE_RQ_SHIFT_LEFT("q4", "q0")
                              MCUFLOW_MVE_RQ_SHIFT_LEFT("q5", "q0"));
  } else {
    MCUFLOW_MVE_GEMM_PAIR("");
  }
}
#undef MCUFLOW_MVE_GEMM_PAIR

// g.left_shifts for g's channel tables.
inline bool gemm_left_shifts(const GemmArgs& g) {
  const int32_t* left = reinterpret_cast<const int32_t*>(g.tables + kGemmLeftShiftAt);
  uint32x4_t any = vdupq_n_u32(0);
  for (int32_t oc = 0; oc < g.out_c; oc += kMveGemmBlock, left += kMveTableRows * kMveGemmBlock) {
    any = vorrq_u32(any, vreinterpretq_u32_s32(vldrwq_s32(left)));
  }
  return vmaxvq_u32(0, any) != 0;
}

// One row against four weight rows: acc[j] = bias'[j] + row . w_j over depth, in a
// tail-predicated loop (the last chunk reads the row and weights only up to depth).
inline int32x4_t dot_1x4(const int8_t* row, const int8_t* w0, const int8_t* w1, const int8_t* w2, const int8_t* w3,
                         int32_t depth, const int32_t* bias) {
  // The operands pinned to registers: left to itself, GCC -O3 finds no allocation for this asm
  // ("impossible constraints") when inlined into the kernels.
  register const int8_t* a asm("r1") = row;
  register const int8_t* p0 asm("r3") = w0;
  register const int8_t* p1 asm("r5") = w1;
  register const int8_t* p2 asm("r7") = w2;
  register const int8_t* p3 asm("r9") = w3;
  register int32_t k asm("r11") = depth;
  register const int32_t* b asm("r8") = bias;
  int32x4_t acc;
  asm volatile(
      "ldm %[bias], {r0, r2, r4, r6}\n\t"
      "dlstp.8 lr, %[k]\n"
      "1:\n\t"
      "vldrb.8 q0, [%[a]], #16\n\t"
      "vldrb.8 q2, [%[w0]], #16\n\t"
      "vmladava.s8 r0, q0, q2\n\t"
      "vldrb.8 q3, [%[w1]], #16\n\t"
      "vmladava.s8 r2, q0, q3\n\t"
      "vldrb.8 q2, [%[w2]], #16\n\t"
      "vmladava.s8 r4, q0, q2\n\t"
      "vldrb.8 q3, [%[w3]], #16\n\t"
      "vmladava.s8 r6, q0, q3\n\t"
      "letp lr, 1b\n\t"
      "vmov %e[acc], r0, r2\n\t"
      "vmov %f[acc], r4, r6"
      : [acc] "=&w"(acc), [a] "+r"(a), [w0] "+r"(p0), [w1] "+r"(p1), [w2] "+r"(p2), [w3] "+r"(p3)
      : [k] "r"(k), [bias] "r"(b)
      : "r0", "r2", "r4", "r6", "lr", "q0", "q2", "q3", "cc", "memory");
  return acc;
}

// Twelve output channels (three table blocks) of one row, computed, requantized and stored:
// out[j] = requantize(bias'[j] + row . w_j), j < 12. Two 1x6 dots in tail-predicated loops (six
// accumulators and six weight pointers are what the core registers hold besides the row and
// the loop counter), the inputs waiting on the stack meanwhile.
struct GemmRowFrame {
  const int8_t* row;      // 0
  const int8_t* weights;  // 4: the first channel's weight row
  int32_t depth;          // 8
  const int32_t* table;   // 12: the first block's channel table
  int8_t* out;            // 16: the first channel's output
  int32_t output_offset;  // 20
};

#define MCUFLOW_MVE_1X6_DOT                     \
  "ldr r1, [sp]\n\t"  /* row */                \
  "ldr r11, [sp, #8]\n\t"  /* depth */         \
  "add r5, r3, r11\n\t"                        \
  "add r7, r5, r11\n\t"                        \
  "add r9, r7, r11\n\t"                        \
  "add r12, r9, r11\n\t"                       \
  "dlstp.8 lr, r11\n\t"                        \
  "add r11, r12, r11\n"                         \
  "1:\n\t"                                     \
  "vldrb.8 q0, [r1], #16\n\t"                  \
  "vldrb.8 q1, [r3], #16\n\t"                  \
  "vmladava.s8 r0, q0, q1\n\t"                 \
  "vldrb.8 q2, [r5], #16\n\t"                  \
  "vmladava.s8 r2, q0, q2\n\t"                 \
  "vldrb.8 q1, [r7], #16\n\t"                  \
  "vmladava.s8 r4, q0, q1\n\t"                 \
  "vldrb.8 q2, [r9], #16\n\t"                  \
  "vmladava.s8 r6, q0, q2\n\t"                 \
  "vldrb.8 q1, [r12], #16\n\t"                 \
  "vmladava.s8 r8, q0, q1\n\t"                 \
  "vldrb.8 q2, [r11], #16\n\t"                 \
  "vmladava.s8 r10, q0, q2\n\t"                \
  "letp lr, 1b\n\t"

// The requantization of accumulator `acc` with the channel table at r0 + `at` bytes, the
// output offset in r2, then its four bytes stored at r1 (moved past them).
#define MCUFLOW_MVE_1X12_OUTPUT(acc, at)                                                         \
  "vldrw.32 q0, [r0, #%c[left] + " at "]\n\t" MCUFLOW_MVE_RQ_SHIFT_LEFT(acc, "q0")                  \
  "vldrw.32 q0, [r0, #%c[mult] + " at "]\n\t" MCUFLOW_MVE_RQ_MULTIPLY(acc, "q0")                    \
  "vldrw.32 q0, [r0, #%c[right] + " at "]\n\t" MCUFLOW_MVE_RQ_SHIFT_RIGHT(acc, "q0", "q1")          \
  MCUFLOW_MVE_RQ_OUTPUT(acc, "r2")                                                               \
  "vstrb.32 " acc ", [r1], #4\n\t"

inline void gemm_row_12(const GemmRowFrame& frame, int32x4_t act_min, int32x4_t act_max) {
  register const GemmRowFrame* f asm("r12") = &frame;
  asm volatile(
      "ldm %[f], {r0-r5}\n\t"
      "push {r0-r5}\n\t"
      "ldm r3, {r0, r2, r4, r6}\n\t"  // bias' of block 0
      "ldrd r8, r10, [r3, %[table_bytes]]\n\t"  // of block 1, lanes 0, 1
      "ldr r3, [sp, #4]\n\t"
      MCUFLOW_MVE_1X6_DOT
      "vmov d6, r0, r2\n\t"  // q3: block 0
      "vmov d7, r4, r6\n\t"
      "vmov d8, r8, r10\n\t"  // q4: block 1
      "ldr r3, [sp, #12]\n\t"
      "ldrd r0, r2, [r3, %[table_bytes] + 8]\n\t"  // bias' of block 1, lanes 2, 3
      "add r3, r3, %[table_bytes] * 2\n\t"
      "ldm r3, {r4, r6, r8, r10}\n\t"  // of block 2
      "ldrd r3, r11, [sp, #4]\n\t"
      "add r3, r3, r11, lsl #2\n\t"
      "add r3, r3, r11, lsl #1\n\t"  // channel 6's weight row
      MCUFLOW_MVE_1X6_DOT
      "vmov d9, r0, r2\n\t"
      "vmov d10, r4, r6\n\t"  // q5: block 2
      "vmov d11, r8, r10\n\t"
      "ldr r0, [sp, #12]\n\t"     // table
      "ldrd r1, r2, [sp, #16]\n\t"  // out, output offset
      MCUFLOW_MVE_1X12_OUTPUT("q3", "0")
      MCUFLOW_MVE_1X12_OUTPUT("q4", "%c[table_bytes]")
      MCUFLOW_MVE_1X12_OUTPUT("q5", "%c[table_bytes] * 2")
      "add sp, sp, #24"
      : [f] "+r"(f)
      : [lo] "w"(act_min), [hi] "w"(act_max), [table_bytes] "i"(MveGemmLayout{0, 0}.table_bytes()),
        [mult] "i"(kGemmMultiplierAt), [left] "i"(kGemmLeftShiftAt), [right] "i"(kGemmMinusRightShiftAt), "m"(frame)
      : "r0", "r1", "r2", "r3", "r4", "r5", "r6", "r7", "r8", "r9", "r10", "r11", "lr", "q0", "q1", "q2", "q3", "q4",
        "q5", "cc", "memory");
}
#undef MCUFLOW_MVE_1X12_OUTPUT
#undef MCUFLOW_MVE_1X6_DOT

#undef MCUFLOW_MVE_2X4_CHUNK
#undef MCUFLOW_MVE_2X4_PARTIAL_CHUNK
#undef MCUFLOW_MVE_RQ_LOAD
#undef MCUFLOW_MVE_RQ_OUTPUT
// MCUFLOW_MVE_RQ_SHIFT_LEFT, _MULTIPLY, _SHIFT_RIGHT and _SHIFT_RIGHT_ALL stay defined: the
// depthwise kernel's assembly uses them too.

// Stores a block's outputs: four, or the `channels` of a partial last block.
inline void store_block(int8_t* out, int32x4_t y, int32_t channels) {
  if (channels == kMveGemmBlock) vstrbq_s32(out, y);
  else vstrbq_p_s32(out, y, vctp32q(uint32_t(channels)));
}

// out[oc] for every output channel, from one row: twelve channels at a time, then blocks of
// four; in a last partial block the rows past out_c repeat the last row (nothing past the
// weights is read) and only its channels are stored.
inline void gemm_one_row(const GemmArgs& g, const int8_t* row, int8_t* out) {
  const int32x4_t act_min = vdupq_n_s32(g.act_min), act_max = vdupq_n_s32(g.act_max);
  constexpr int32_t kTableEntries = kMveTableRows * kMveGemmBlock;
  const int32_t depth = g.depth;
  GemmRowFrame frame{row, g.weights, depth, reinterpret_cast<const int32_t*>(g.tables), out, g.output_offset};
  int32_t oc = 0;
  for (; oc + 3 * kMveGemmBlock <= g.out_c; oc += 3 * kMveGemmBlock) {
    gemm_row_12(frame, act_min, act_max);
    frame.weights += 3 * kMveGemmBlock * depth, frame.table += 3 * kTableEntries, frame.out += 3 * kMveGemmBlock;
  }
  const int8_t* w = frame.weights;
  const int32_t* table = frame.table;
  for (; oc < g.out_c; oc += kMveGemmBlock, w += kMveGemmBlock * depth, table += kTableEntries) {
    const int32_t channels = g.out_c - oc;
    const int8_t* last = w + (channels < kMveGemmBlock ? channels - 1 : kMveGemmBlock - 1) * depth;
    const int32x4_t acc = dot_1x4(row, w, channels > 1 ? w + depth : last, channels > 2 ? w + 2 * depth : last, last,
                                  depth, table + kGemmBiasAt / 4);
    store_block(out + oc,
                requantize<kGemmMultiplierAt, kGemmLeftShiftAt, kGemmMinusRightShiftAt>(acc, table, g.output_offset,
                                                                                        act_min, act_max),
                channels);
  }
}

// pair = row0 and row1 (depth bytes each) interleaved by chunks of 16: row0[0, 16),
// row1[0, 16), row0[16, 32) ...; a partial last chunk is written only up to depth, row 1's
// at 16 bytes past row 0's (mve_pair_bytes(depth) bytes in all).
inline void interleave_rows(int8_t* pair, const int8_t* row0, const int8_t* row1, int32_t depth) {
  asm volatile(
      "dlstp.8 lr, %[n]\n"
      "1:\n\t"
      "vldrb.8 q0, [%[r0]], #16\n\t"
      "vldrb.8 q1, [%[r1]], #16\n\t"
      "vstrb.8 q1, [%[d], #16]\n\t"
      "vstrb.8 q0, [%[d]], #32\n\t"
      "letp lr, 1b"
      : [r0] "+r"(row0), [r1] "+r"(row1), [d] "+r"(pair)
      : [n] "r"(depth)
      : "lr", "q0", "q1", "memory");
}

// Row r's g.out_c outputs at output + r * out_stride, r < rows, of rows g.depth apart from
// `input` (fc_s8_mve): two rows interleaved in the scratch (mve_pair_bytes(depth)) by four output
// channels at a time, one row by four for a single or last odd row.
inline void gemm_rows(GemmArgs g, const int8_t* input, int32_t rows, int8_t* scratch, int8_t* output,
                      int32_t out_stride) {
  if (rows > 1) g.left_shifts = gemm_left_shifts(g);  // scanned only where rows pair up
  int32_t r = 0;
  for (; r + 1 < rows; r += 2) {
    interleave_rows(scratch, input + r * g.depth, input + (r + 1) * g.depth, g.depth);
    gemm_two_rows(g, scratch, output + r * out_stride, output + (r + 1) * out_stride);
  }
  if (r < rows) gemm_one_row(g, input + r * g.depth, output + r * out_stride);
}

// out[i] = weight i of the packed int4 `packed` (int4_weights.h), i < count: each 16 bytes hold 32
// weights, the low nibbles (even elements) and high nibbles (odd) sign-extended by shifts and
// interleaved back by VST2; the last 0 ... 31 weights one byte at a time.
inline void unpack_weights_s4(const uint8_t* packed, int32_t count, int8_t* out) {
  int32_t i = 0;
  for (; i + 2 * kMveChunk <= count; i += 2 * kMveChunk, packed += kMveChunk) {
    const int8x16_t bytes = vreinterpretq_s8_u8(vldrbq_u8(packed));
    int8x16x2_t weights;
    weights.val[0] = vshrq_n_s8(vshlq_n_s8(bytes, 4), 4);
    weights.val[1] = vshrq_n_s8(bytes, 4);
    vst2q_s8(out + i, weights);
  }
  kernels::unpack_s4(packed, count - i, out + i);
}

// What an int4-weight kernel builds in its scratch for its int8 kernel (kernels_mve.h).
struct W4Inputs {
  const int8_t* weights;    // the `count` weights, unpacked
  const uint8_t* prepared;  // the int8 kernel's prepared input of `layout`, from them
  int8_t* rest;             // the scratch after both
};

template <typename Layout>
inline W4Inputs build_w4_inputs(const Layout& layout, int32_t count, const uint8_t* packed, const int32_t* bias,
                                const int32_t* multipliers, const int32_t* shifts, bool per_channel_requant,
                                int32_t input_offset, int8_t* scratch) {
  unpack_weights_s4(packed, count, scratch);
  auto* prepared = reinterpret_cast<uint8_t*>(scratch + w4_unpacked_bytes(count));
  const MveReferenceInputs r{scratch, bias, multipliers, shifts, per_channel_requant, input_offset};
  if constexpr (std::is_same_v<Layout, MveGemmLayout>) {
    build_gemm_tables(layout, r, reinterpret_cast<int32_t*>(prepared));
  } else if constexpr (std::is_same_v<Layout, MvePointwiseLayout>) {
    build_pointwise_blocks(layout, r, prepared);
  } else {
    uint8_t* at = prepared;
    mve_emit_prepared(layout, r, [&at](uint8_t byte) {
      *at++ = byte;
      return true;
    });
  }
  return {scratch, prepared, scratch + w4_unpacked_bytes(count) + layout.total_bytes()};
}

// dst[0, n) = src[0, n), 16 bytes per step of a tail-predicated loop (none for n = 0). In
// assembly: compiled, the predicate moves through core registers at every step.
inline void copy_bytes(int8_t* dst, const int8_t* src, int32_t n) {
  asm volatile(
      "wlstp.8 lr, %[n], 2f\n"
      "1:\n\t"
      "vldrb.8 q0, [%[src]], #16\n\t"
      "vstrb.8 q0, [%[dst]], #16\n\t"
      "letp lr, 1b\n"
      "2:"
      : [src] "+r"(src), [dst] "+r"(dst)
      : [n] "r"(n)
      : "lr", "q0", "memory");
}

// dst[0, n) = value.
inline void fill_bytes(int8_t* dst, int8x16_t value, int32_t n) {
  asm volatile(
      "wlstp.8 lr, %[n], 2f\n"
      "1:\n\t"
      "vstrb.8 %q[v], [%[dst]], #16\n\t"
      "letp lr, 1b\n"
      "2:"
      : [dst] "+r"(dst)
      : [n] "r"(n), [v] "w"(value)
      : "lr", "memory");
}

// Each byte of `input` looked up in a 256-entry table, sixteen lanes per byte gather: entry
// b ^ kFlip for byte b (kFlip 0: the byte as unsigned; 0x80: as signed plus 128). Whole vectors
// unpredicated (GCC 12 spends as many instructions again on a VCTP loop's predicate), then one
// predicated tail. Each step reads its sixteen inputs before writing them, so it runs in place.
template <uint8_t kFlip>
inline void lookup_bytes(int32_t n, const int8_t* input, const int8_t* table, int8_t* output) {
  const auto* entries = reinterpret_cast<const uint8_t*>(table);
  const auto* in = reinterpret_cast<const uint8_t*>(input);
  auto* out = reinterpret_cast<uint8_t*>(output);
  const auto offsets = [](uint8x16_t bytes) { return kFlip != 0 ? veorq_u8(bytes, vdupq_n_u8(kFlip)) : bytes; };
  int32_t i = 0;
  for (; i + kMveChunk <= n; i += kMveChunk) vstrbq_u8(out + i, vldrbq_gather_offset_u8(entries, offsets(vldrbq_u8(in + i))));
  if (i < n) {
    const mve_pred16_t valid = vctp8q(uint32_t(n - i));
    vstrbq_p_u8(out + i, vldrbq_gather_offset_z_u8(entries, offsets(vldrbq_z_u8(in + i, valid)), valid), valid);
  }
}

// n bytes from `from` to `to`: whole vectors unpredicated, then one predicated tail (as
// lookup_bytes). Each vector is read before it is written: onto itself it stays correct.
inline void copy_bytes(int32_t n, const int8_t* from, int8_t* to) {
  int32_t i = 0;
  for (; i + kMveChunk <= n; i += kMveChunk) vstrbq_s8(to + i, vldrbq_s8(from + i));
  if (i < n) {
    const mve_pred16_t valid = vctp8q(uint32_t(n - i));
    vstrbq_p_s8(to + i, vldrbq_z_s8(from + i, valid), valid);
  }
}

// n bytes of `value` from `to`.
inline void fill_bytes(int32_t n, int8_t value, int8_t* to) {
  const int8x16_t v = vdupq_n_s8(value);
  int32_t i = 0;
  for (; i + kMveChunk <= n; i += kMveChunk) vstrbq_s8(to + i, v);
  if (i < n) vstrbq_p_s8(to + i, v, vctp8q(uint32_t(n - i)));
}

// lut_s16_at (lut_s16.h) on four lanes of table inputs u (0..65535): both neighbouring entries
// gathered, then lo + ((hi - lo) * f + 64) >> 7 (VRSHR rounds half up: the reference's blend).
// Inactive lanes load nothing.
inline int32x4_t lut_s16_at(const int16_t* table, uint32x4_t u, mve_pred16_t lanes) {
  const uint32x4_t at = vshrq_n_u32(u, kLutS16StepBits);
  const int32x4_t f = vreinterpretq_s32_u32(vandq_u32(u, vdupq_n_u32(kLutS16Step - 1)));
  const int32x4_t lo = vldrhq_gather_shifted_offset_z_s32(table, at, lanes);
  const int32x4_t hi = vldrhq_gather_shifted_offset_z_s32(table + 1, at, lanes);
  return vaddq_s32(lo, vrshrq_n_s32(vmulq_s32(vsubq_s32(hi, lo), f), kLutS16StepBits));
}

}  // namespace mcuflow::kernels::mve
#endif  // __ARM_FEATURE_MVE
