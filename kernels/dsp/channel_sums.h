// Sums of int8 channels over a pooling window's pixels, DSP extension, shared by the average
// pooling and reduce kernels (avgpool_s8_dsp, reduce_s8_dsp): sixteen channels at a time (then
// eight, four), four word loads per pixel, each word split by SXTAB16 into channels (c, c+2) and
// (c+1, c+3) added into 16-bit halves. A half holds the sum of up to kPoolLanePixels int8 values
// exactly, so the window is summed in blocks of at most that many pixels, each block's halves
// added into int32 totals; the last 1-3 channels are summed one by one (channel_sum). Device
// builds only.
#pragma once
#include "dsp_blocks.h"
#include "mcuflow/kernels/pool_window.h"

#if defined(__ARM_FEATURE_DSP)
namespace mcuflow::kernels::dsp {

constexpr int32_t kSumWordsPerPass = 4;  // sixteen channels

// totals[j] += the block's sum of channel j (j < 4 * kWords), for the channels starting at x.
template <int32_t kWords>
void add_block_sums(const int8_t* x, int32_t rows, int32_t cols, int32_t channels, int32_t row_step,
                    int32_t* totals) {
  int32_t even[kWords] = {}, odd[kWords] = {};
  for (int32_t r = 0; r < rows; ++r, x += row_step) {
    const int8_t* px = x;
    if constexpr (kWords == 4) {
      // In assembly: compiled, eight accumulators leave too few registers for the loop.
      // The operands pinned to registers: left to itself, GCC finds no allocation for twelve.
      register int32_t e0 asm("r0") = even[0], o0 asm("r1") = odd[0], e1 asm("r2") = even[1], o1 asm("r3") = odd[1];
      register int32_t e2 asm("r4") = even[2], o2 asm("r5") = odd[2], e3 asm("r6") = even[3], o3 asm("r8") = odd[3];
      register const int8_t* pp asm("r9") = px;
      register const int8_t* end asm("r10") = px + cols * channels;
      register int32_t step asm("r11") = channels;
      register int32_t v asm("r12");
      asm volatile(
          "1:\n\t"
          "ldr %[v], [%[px]]\n\t"
          "sxtab16 %[e0], %[e0], %[v]\n\t"
          "sxtab16 %[o0], %[o0], %[v], ror #8\n\t"
          "ldr %[v], [%[px], #4]\n\t"
          "sxtab16 %[e1], %[e1], %[v]\n\t"
          "sxtab16 %[o1], %[o1], %[v], ror #8\n\t"
          "ldr %[v], [%[px], #8]\n\t"
          "sxtab16 %[e2], %[e2], %[v]\n\t"
          "sxtab16 %[o2], %[o2], %[v], ror #8\n\t"
          "ldr %[v], [%[px], #12]\n\t"
          "sxtab16 %[e3], %[e3], %[v]\n\t"
          "sxtab16 %[o3], %[o3], %[v], ror #8\n\t"
          "add %[px], %[px], %[step]\n\t"
          "cmp %[px], %[end]\n\t"
          "bne 1b"
          : [e0] "+r"(e0), [o0] "+r"(o0), [e1] "+r"(e1), [o1] "+r"(o1), [e2] "+r"(e2), [o2] "+r"(o2), [e3] "+r"(e3),
            [o3] "+r"(o3), [px] "+r"(pp), [v] "=&r"(v)
          : [step] "r"(step), [end] "r"(end)
          : "cc", "memory");
      even[0] = e0, odd[0] = o0, even[1] = e1, odd[1] = o1, even[2] = e2, odd[2] = o2, even[3] = e3, odd[3] = o3;
      continue;
    }
    for (int32_t i = 0; i < cols; ++i, px += channels) {
      for (int32_t w = 0; w < kWords; ++w) {
        const int32_t v = read_word(px + 4 * w);
        even[w] = __sxtab16(even[w], v);
        odd[w] = sxtab16_odd(odd[w], v);
      }
    }
  }
  for (int32_t w = 0; w < kWords; ++w, totals += 4) {
    totals[0] += int16_t(even[w]);
    totals[1] += int16_t(odd[w]);
    totals[2] += even[w] >> 16;
    totals[3] += odd[w] >> 16;
  }
}

// The window's sum of channel c alone.
inline int32_t channel_sum(const PoolWindow& window, int32_t c, int32_t channels) {
  int32_t sum = 0;
  for (int32_t r = 0; r < window.rows; ++r) {
    for (int32_t i = 0; i < window.cols; ++i) sum += window.first[r * window.row_step + i * channels + c];
  }
  return sum;
}

// out[c + j] = stage(the window's sum of channel c + j) for the 4 * kWords channels from c on.
template <int32_t kWords, typename Stage>
void sum_pass(const PoolWindow& window, int32_t c, int32_t channels, Stage stage, int8_t* out) {
  int32_t totals[4 * kWords] = {};
  window.for_each_block(kPoolLanePixels, channels, [&](const int8_t* first, int32_t rows, int32_t cols) {
    add_block_sums<kWords>(first + c, rows, cols, channels, window.row_step, totals);
  });
  for (int32_t j = 0; j < 4 * kWords; ++j) out[c + j] = stage(totals[j]);
}

// out[c] = stage(the window's sum of channel c) for every channel: sixteen per pass, then eight,
// four, and the last 1-3 one by one.
template <typename Stage>
void sum_channels(const PoolWindow& window, int32_t channels, Stage stage, int8_t* out) {
  int32_t c = 0;
  for (; c + 4 * kSumWordsPerPass <= channels; c += 4 * kSumWordsPerPass) {
    sum_pass<kSumWordsPerPass>(window, c, channels, stage, out);
  }
  if (c + 8 <= channels) {
    sum_pass<2>(window, c, channels, stage, out);
    c += 8;
  }
  if (c + 4 <= channels) {
    sum_pass<1>(window, c, channels, stage, out);
    c += 4;
  }
  for (; c < channels; ++c) out[c] = stage(channel_sum(window, c, channels));
}

}  // namespace mcuflow::kernels::dsp
#endif  // __ARM_FEATURE_DSP
