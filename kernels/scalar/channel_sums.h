// Sums of int8 channels over a pooling window's pixels, Armv6-M, shared by the average pooling
// and reduce kernels (avgpool_s8_scalar, reduce_s8_scalar): four channels per word load (SWAR).
// Each byte is biased to x + 128 in [0, 255] (EOR 0x80808080), then a word's bytes 0 and 2
// ("even") and 1 and 3 ("odd") are summed in 16-bit lanes of two accumulators; up to
// kPoolLanePixels + 1 pixels fit a lane. Only the odd bytes need masking: the plain word sum is
// even + (odd << 8) (mod 2^32), so even = words - (odd << 8). A block's lane sums less 128 per
// pixel are the channels' sums. Inputs whose words are not 4-byte aligned (the channel count not
// a multiple of four) are summed byte by byte.
#pragma once
#include <cstring>

#include "mcuflow/kernels/pool_window.h"

namespace mcuflow::kernels::scalar {
// Internal linkage, as if each kernel had written them: GCC then inlines them as it did there
// (with external linkage, DS-CNN's average pool took 3,044 more instructions on qemu-m0).
namespace {

constexpr uint32_t kSumBias = 0x80808080u, kSumOddMask = 0x00FF00FFu;

// totals[j] += the block's sum of channel c + j, j < 4 * kWords (word-aligned pixels).
template <int32_t kWords>
void add_block_sums(const int8_t* x, int32_t rows, int32_t cols, int32_t channels, int32_t row_step,
                    int32_t* totals) {
  uint32_t words[kWords] = {}, odd[kWords] = {};
  for (int32_t r = 0; r < rows; ++r, x += row_step) {
    const int8_t* px = x;
    const int8_t* end = px + cols * channels;
    do {
      for (int32_t w = 0; w < kWords; ++w) {
        uint32_t v;
        std::memcpy(&v, __builtin_assume_aligned(px + 4 * w, 4), 4);  // a plain LDR
        v ^= kSumBias;
        words[w] += v;
        odd[w] += (v >> 8) & kSumOddMask;
      }
      px += channels;
    } while (px != end);
  }
  const int32_t bias = 128 * rows * cols;
  for (int32_t w = 0; w < kWords; ++w, totals += 4) {
    const uint32_t even = words[w] - (odd[w] << 8);
    totals[0] += int32_t(even & 0xFFFFu) - bias;
    totals[1] += int32_t(odd[w] & 0xFFFFu) - bias;
    totals[2] += int32_t(even >> 16) - bias;
    totals[3] += int32_t(odd[w] >> 16) - bias;
  }
}

// The window's sum of channel c, byte by byte, four pixels per step.
inline int32_t channel_sum(const PoolWindow& window, int32_t c, int32_t channels) {
  int32_t sum = 0;
  for (int32_t r = 0; r < window.rows; ++r) {
    const int8_t* x = window.first + r * window.row_step + c;
    int32_t i = 0;
    for (; i + 4 <= window.cols; i += 4, x += 4 * channels) sum += x[0] + x[channels] + x[2 * channels] + x[3 * channels];
    for (; i < window.cols; ++i, x += channels) sum += *x;
  }
  return sum;
}

}  // namespace
}  // namespace mcuflow::kernels::scalar
