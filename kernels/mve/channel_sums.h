// Sums of int8 channels over a pooling window's pixels, MVE, shared by the average pooling and
// reduce kernels (avgpool_s8_mve, reduce_s8_mve): 32 channels per pass in int16 lanes (VLDRB.S16
// widens eight channels per load), exact for blocks of up to kPoolLanePixels pixels, each block's
// lanes widened into int32 totals. Device builds only.
#pragma once
#include "mcuflow/kernels/pool_window.h"
#include "mve_blocks.h"

#if defined(__ARM_FEATURE_MVE)
namespace mcuflow::kernels::mve {

constexpr int32_t kSumLanes = 8;          // int16 lanes of one vector
constexpr int32_t kSumVectorsPerPass = 4;  // 32 channels

// Per vector v of a pass: totals[8 v, 8 v + 4) hold its even channels, [8 v + 4, 8 v + 8) its odd
// ones (the order VMOVLB / VMOVLT widen them in, undone by VMOVNB / VMOVNT when storing).
template <int32_t kVectors, bool kPartial>
void add_block_sums(const int8_t* x, int32_t rows, int32_t cols, int32_t channels, int32_t row_step,
                    const mve_pred16_t* valid, int32_t* totals) {
  int16x8_t s[kVectors];
  for (int32_t v = 0; v < kVectors; ++v) s[v] = vdupq_n_s16(0);
  for (int32_t r = 0; r < rows; ++r, x += row_step) {
    const int8_t* px = x;
    if constexpr (kVectors == 4 && !kPartial) {
      // In assembly: compiled, the loop reloads its step and copies pointers at every pixel.
      asm volatile(
          "dls lr, %[n]\n"
          "1:\n\t"
          "vldrb.s16 q4, [%[px], #8]\n\t"
          "vldrb.s16 q5, [%[px], #16]\n\t"
          "vldrb.s16 q6, [%[px], #24]\n\t"
          "vldrb.s16 q7, [%[px]]\n\t"
          "add %[px], %[px], %[step]\n\t"
          "vadd.i16 %q[s0], %q[s0], q7\n\t"
          "vadd.i16 %q[s1], %q[s1], q4\n\t"
          "vadd.i16 %q[s2], %q[s2], q5\n\t"
          "vadd.i16 %q[s3], %q[s3], q6\n\t"
          "le lr, 1b"
          : [px] "+r"(px), [s0] "+w"(s[0]), [s1] "+w"(s[1]), [s2] "+w"(s[2]), [s3] "+w"(s[3])
          : [n] "r"(cols), [step] "r"(channels)
          : "lr", "q4", "q5", "q6", "q7", "memory");
      continue;
    }
    for (int32_t i = 0; i < cols; ++i, px += channels) {
      for (int32_t v = 0; v < kVectors; ++v) {
        s[v] = vaddq_s16(s[v], kPartial ? vldrbq_z_s16(px + kSumLanes * v, valid[v]) : vldrbq_s16(px + kSumLanes * v));
      }
    }
  }
  for (int32_t v = 0; v < kVectors; ++v, totals += 2 * 4) {
    vst1q_s32(totals, vaddq_s32(vld1q_s32(totals), vmovlbq_s16(s[v])));
    vst1q_s32(totals + 4, vaddq_s32(vld1q_s32(totals + 4), vmovltq_s16(s[v])));
  }
}

}  // namespace mcuflow::kernels::mve
#endif  // __ARM_FEATURE_MVE
