// Pointwise (1x1) convolution, int8, MVE: a GEMM of output pixels against the weights of the
// prepared input (MvePointwiseLayout, kernels_mve.h), two pixels (interleaved in the scratch) by
// four output channels per block. Like the reference it walks the pixels backwards when the output
// starts above the input (raster_order.h); a pair's two input pixels are read before either output
// is written, so it may run in place wherever the reference may. A last odd pixel is paired with
// itself, its two results stored to the same bytes.
#include "mve_blocks.h"

namespace mcuflow::kernels {
namespace {

using Layout = MvePointwiseLayout;

// What the block loop keeps at hand (in this order: q4-q7): the requantization's output step on the eight
// int16 lanes of a block's two pixels (channel c of pixel 0 in lane 2c, of pixel 1 in 2c + 1),
// and the byte offsets of those lanes from the block's first output: c and pixel_step + c.
struct PairOutput {
  int16x8_t offset, act_min, act_max;
  uint16x8_t lanes;
};

PairOutput pair_output(const ConvParams& p, int32_t pixel_step) {
  const uint16x8_t lane = vidupq_n_u16(0, 1);
  // Lane l: l / 2 + (l odd) * pixel_step.
  const uint16x8_t odd = vandq_u16(lane, vdupq_n_u16(1));
  return {vdupq_n_s16(int16_t(p.out.output_offset)), vdupq_n_s16(int16_t(p.out.act_min)),
          vdupq_n_s16(int16_t(p.out.act_max)),
          vmlaq_n_u16(vshrq_n_u16(lane, 1), odd, uint16_t(pixel_step))};
}

// Per block: the accumulators start at bias' (LDM, LDMDB of the same row), the 2x4 dot over the
// chunks, two per pass, then both pixels requantized in four lanes each, narrowed (saturating)
// into one int16 vector and stored by one scatter, predicated to the block's channels. A pass
// loads two chunks of the pair (at r1, walking from r5 to r7) by one VLDM into q0-q3 and each
// chunk's 64 weights (at r3) by one VLDM into q4-q7: ten instructions per 128 MACs. The
// PairOutput vectors wait on the stack meanwhile (one VLDM back into q4-q7 per block).
// Accumulators live in the even core registers VMLADAVA requires: channel j of pixel 0 in r(2j),
// of pixel 1 in r(8 + 2j) (lr for j = 3).
#define MCUFLOW_MVE_PW_CHUNK(p0, p1)                                                                \
  "vldmia r3!, {d8-d15}\n\t"                                                                        \
  "vmladava.s8 r0, " p0 ", q4\n\t" "vmladava.s8 r8, " p1 ", q4\n\t"                                 \
  "vmladava.s8 r2, " p0 ", q5\n\t" "vmladava.s8 r10, " p1 ", q5\n\t"                                \
  "vmladava.s8 r4, " p0 ", q6\n\t" "vmladava.s8 r12, " p1 ", q6\n\t"                                \
  "vmladava.s8 r6, " p0 ", q7\n\t" "vmladava.s8 lr, " p1 ", q7\n\t"

#define MCUFLOW_MVE_PW_PAIR(left_shift_steps, right_shift_steps)                                   \
  asm volatile(                                                                                     \
      "vldmia r0, {d8-d15}\n\t"                                                                     \
      "vpush {d8-d15}\n"                                                                            \
      "5:\n\t"                                                                                      \
      "ldm r3!, {r0, r2, r4, r6}\n\t"                                                               \
      "ldmdb r3, {r8, r10, r12, lr}\n\t"                                                            \
      "mov r1, r5\n"                                                                                \
      "1:\n\t"                                                                                      \
      "vldmia r1!, {d0-d7}\n\t" MCUFLOW_MVE_PW_CHUNK("q0", "q1") MCUFLOW_MVE_PW_CHUNK("q2", "q3")   \
      "cmp r1, r7\n\t"                                                                              \
      "bne 1b\n\t"                                                                                  \
      "vmov d4, r0, r2\n\t" /* q2: pixel 0 */                                                       \
      "vmov d5, r4, r6\n\t"                                                                         \
      "vmov d6, r8, r10\n\t" /* q3: pixel 1 */                                                      \
      "vmov d7, r12, lr\n\t"                                                                        \
      "vldmia sp, {d8-d15}\n\t" left_shift_steps                                                    \
      "vldrw.32 q0, [r3, %[mult]]\n\t" MCUFLOW_MVE_RQ_MULTIPLY("q2", "q0") MCUFLOW_MVE_RQ_MULTIPLY("q3", "q0") \
      "vldrw.32 q0, [r3], %[rows]\n\t" /* the minus right shift; r3: the next block */              \
      right_shift_steps                                                                             \
      "vqmovnb.s32 q2, q2\n\t"                                                                      \
      "vqmovnt.s32 q2, q3\n\t"                                                                      \
      "vqadd.s16 q2, q2, q4\n\t"                                                                    \
      "vmax.s16 q2, q2, q5\n\t"                                                                     \
      "vmin.s16 q2, q2, q6\n\t"                                                                     \
      "vctp.32 r11\n\t" /* all four channels unless the block is partial */                         \
      "vpst\n\t"                                                                                    \
      "vstrbt.16 q2, [r9, q7]\n\t"                                                                  \
      "adds r9, r9, #4\n\t"                                                                         \
      "subs r11, r11, #4\n\t"                                                                       \
      "bgt 5b\n\t"                                                                                  \
      "add sp, sp, #64"                                                                             \
      : "+r"(vectors), "+r"(blocks), "+r"(out), "+r"(channels)                                      \
      : "r"(pair), "r"(pair_end), [mult] "i"(Layout::kMultiplierAfter), [left] "i"(Layout::kLeftShiftAfter), \
        [rows] "i"(3 * kMveGemmBlock * 4)                                                           \
      : "r1", "r2", "r4", "r6", "r8", "r10", "r12", "lr", "q0", "q1", "q2", "q3", "q4", "q5", "q6", "q7", "p0", \
        "cc", "memory")

// Both pixels of the pair (interleaved by interleave_rows, as many chunks as the weights) for every
// output channel: pixel 0's at out, pixel 1's at out + the step `o.lanes` holds. `fast`: no channel
// shifts left and every channel shifts right (fast_shifts below), so those steps shorten.
void gemm_pair(const Layout& layout, const uint8_t* prepared, const int8_t* pair_at, int8_t* out_at,
               const PairOutput& o, bool fast) {
  register const PairOutput* vectors asm("r0") = &o;
  register const uint8_t* blocks asm("r3") = prepared;
  register const int8_t* pair asm("r5") = pair_at;
  register const int8_t* pair_end asm("r7") = pair_at + mve_pointwise_pair_bytes(layout.depth);
  register int8_t* out asm("r9") = out_at;
  register int32_t channels asm("r11") = layout.out_c;
  if (fast) {
    MCUFLOW_MVE_PW_PAIR("", MCUFLOW_MVE_RQ_SHIFT_RIGHT_ALL("q2", "q0", "q1")
                                MCUFLOW_MVE_RQ_SHIFT_RIGHT_ALL("q3", "q0", "q1"));
  } else {
    MCUFLOW_MVE_PW_PAIR("vldrw.32 q0, [r3, %[left]]\n\t" MCUFLOW_MVE_RQ_SHIFT_LEFT("q2", "q0")
                            MCUFLOW_MVE_RQ_SHIFT_LEFT("q3", "q0"),
                        MCUFLOW_MVE_RQ_SHIFT_RIGHT("q2", "q0", "q1") MCUFLOW_MVE_RQ_SHIFT_RIGHT("q3", "q0", "q1"));
  }
}
#undef MCUFLOW_MVE_PW_PAIR
#undef MCUFLOW_MVE_PW_CHUNK

// Whether the fast requantization applies: no left shift and a right shift in every channel
// (a partial last block repeats a real channel, so every lane counts).
bool fast_shifts(const Layout& layout, const uint8_t* prepared) {
  const uint8_t* rows = prepared + kMveTableRows * kMveGemmBlock + layout.weight_bytes();  // the block's row after bias', weights
  uint32x4_t left = vdupq_n_u32(0);
  int32x4_t right = vdupq_n_s32(INT32_MIN);
  for (int32_t b = 0; b < layout.blocks(); ++b, rows += layout.block_bytes()) {
    left = vorrq_u32(left, vldrwq_u32(reinterpret_cast<const uint32_t*>(rows + Layout::kLeftShiftAfter)));
    right = vmaxq_s32(right, vldrwq_s32(reinterpret_cast<const int32_t*>(rows + Layout::kMinusRightShiftAfter)));
  }
  return vmaxvq_u32(0, left) == 0 && vmaxvq_s32(INT32_MIN, right) < 0;
}

}  // namespace

void conv_s8_1x1_mve(const ConvParams& p, const int8_t* input, const uint8_t* prepared, int8_t* scratch,
                     int8_t* output) {
  const Layout layout{p.in_c, p.out_c};
  const bool fast = fast_shifts(layout, prepared);
  const PairOutput pairs = pair_output(p, p.out_c);
  const int32_t pixels = p.out_h * p.out_w;
  // Output pixel q reads input pixel (q / out_w * stride_h, q % out_w * stride_w).
  auto input_of = [&](int32_t q) {
    return input + ((q / p.out_w) * p.stride_h * p.in_w + (q % p.out_w) * p.stride_w) * p.in_c;
  };
  auto run_pair = [&](int32_t q) {
    mve::interleave_rows(scratch, input_of(q), input_of(q + 1), p.in_c);
    gemm_pair(layout, prepared, scratch, output + q * p.out_c, pairs, fast);
  };
  auto run_last = [&](int32_t q) {
    mve::interleave_rows(scratch, input_of(q), input_of(q), p.in_c);
    gemm_pair(layout, prepared, scratch, output + q * p.out_c, pair_output(p, 0), fast);
  };
  if (reinterpret_cast<uintptr_t>(output) > reinterpret_cast<uintptr_t>(input)) {
    int32_t q = pixels;
    for (; q >= 2; q -= 2) run_pair(q - 2);
    if (q == 1) run_last(0);
    return;
  }
  int32_t q = 0;
  for (; q + 1 < pixels; q += 2) run_pair(q);
  if (q < pixels) run_last(q);
}

}  // namespace mcuflow::kernels
