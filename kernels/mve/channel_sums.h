// Sums of int8 channels over a pooling window's pixels, MVE, shared by the average pooling and
// reduce kernels (avgpool_s8_mve, reduce_s8_mve): 32 channels per pass in int16 lanes (VLDRB.S16
// widens eight channels per load), exact for blocks of up to kPoolLanePixels pixels, each block's
// lanes widened into int32 totals. Device builds only.
#pragma once
#include <type_traits>

#include "mcuflow/kernels/pool_window.h"
#include "mve_blocks.h"

#if defined(__ARM_FEATURE_MVE)
namespace mcuflow::kernels::mve {

constexpr int32_t kSumLanes = 8;          // int16 lanes of one vector
constexpr int32_t kSumVectorsPerPass = 4;  // 32 channels

// Per vector v of a pass: totals[8 v, 8 v + 4) hold its even channels, [8 v + 4, 8 v + 8) its odd
// ones (the order VMOVLB / VMOVLT widen them in, undone by VMOVNB / VMOVNT when storing).
constexpr int32_t total_of_channel(int32_t j) { return j / kSumLanes * kSumLanes + j % 2 * 4 + j % kSumLanes / 2; }

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

// One pass of kVectors * 8 channels from channel c on (kPartial: the channels - c < 8 left):
// the window's totals of them (zeroed first), and the lanes `valid` to load and store.
template <int32_t kVectors, bool kPartial>
struct ChannelPass {
  mve_pred16_t valid[kVectors];
  int32_t totals[kVectors * kSumLanes] = {};

  ChannelPass(const PoolWindow& window, int32_t c, int32_t channels) {
    for (int32_t v = 0; v < kVectors; ++v) valid[v] = vctp16q(uint32_t(channels - c - kSumLanes * v));
    window.for_each_block(kPoolLanePixels, channels, [&](const int8_t* first, int32_t rows, int32_t cols) {
      add_block_sums<kVectors, kPartial>(first + c, rows, cols, channels, window.row_step, valid, totals);
    });
  }

  // out[j] = stage(the total of channel c + j) for the pass's channels, stage mapping four int32
  // totals to four outputs within int8.
  template <typename Stage>
  void store(Stage stage, int8_t* out) const {
    for (int32_t v = 0; v < kVectors; ++v) {
      const int32x4_t even = stage(vld1q_s32(totals + kSumLanes * v));
      const int32x4_t odd = stage(vld1q_s32(totals + kSumLanes * v + 4));
      const int16x8_t both = vmovntq_s32(vmovnbq_s32(vdupq_n_s16(0), even), odd);
      if (kPartial) vstrbq_p_s16(out + kSumLanes * v, both, valid[v]);
      else vstrbq_s16(out + kSumLanes * v, both);
    }
  }
};

// f(c, pass) for the passes covering `channels`: 32 channels each, then 8, then a partial one.
template <typename F>
void for_each_channel_pass(const PoolWindow& window, int32_t channels, F f) {
  int32_t c = 0;
  for (; c + kSumLanes * kSumVectorsPerPass <= channels; c += kSumLanes * kSumVectorsPerPass) {
    f(c, ChannelPass<kSumVectorsPerPass, false>(window, c, channels));
  }
  for (; c + kSumLanes <= channels; c += kSumLanes) f(c, ChannelPass<1, false>(window, c, channels));
  if (c < channels) f(c, ChannelPass<1, true>(window, c, channels));
}

}  // namespace mcuflow::kernels::mve
#endif  // __ARM_FEATURE_MVE
