// Sum or mean over the middle axis of [outer][reduce][inner], int8, Armv6-M: the reference's
// int32 sums of the offset inputs, as sum(x) + reduce * input_offset (exact: |sum| < 2^31 for
// the verified reduce), requantized without a 64-bit product or a division (scalar_requantize,
// kernels_scalar.h). The sums run down `inner` columns four channels per word (SWAR,
// channel_sums.h) where the rows' words are aligned; with inner 1 each row of `reduce`
// contiguous values is summed as pixels of eight channels from its first aligned word on.
#include "channel_sums.h"
#include "mcuflow/kernels/kernels_scalar.h"

namespace mcuflow::kernels {
namespace {

constexpr int32_t kRowPixelBytes = 8;  // inner 1: contiguous values summed as pixels of two words

// The sum of n >= 1 contiguous values.
inline int32_t row_sum(const int8_t* x, int32_t n) {
  int32_t sum = 0, i = 0;
  for (; i < n && (reinterpret_cast<uintptr_t>(x + i) & 3) != 0; ++i) sum += x[i];
  const int32_t pixels = (n - i) / kRowPixelBytes;
  if (pixels > 0) {
    const PoolWindow run{x + i, 1, pixels, 0, pixels};
    scalar::for_each_channel_pass(run, kRowPixelBytes, true, [&](int32_t, int32_t count, const int32_t* totals) {
      for (int32_t j = 0; j < count; ++j) sum += totals[j];
    });
    i += pixels * kRowPixelBytes;
  }
  for (; i < n; ++i) sum += x[i];
  return sum;
}

}  // namespace

void reduce_s8_scalar(const ReduceParams& params, const int8_t* input, int8_t* output) {
  const ReduceParams p = params;  // a copy: the output stores could alias the fields otherwise
  const int32_t offset_sum = p.reduce * p.input_offset;
  int32_t requant[kScalarRequantWords];
  for (int32_t j = 0; j < kScalarRequantWords; ++j) requant[j] = scalar_requant_word(p.multiplier, p.shift, j);
  const auto requantize = [&](int32_t sum) {
    const int32_t y = scalar_requantize(sum + offset_sum, requant) + p.output_offset;
    return int8_t(clamp_i32(y, p.act_min, p.act_max));
  };
  if (p.inner == 1) {
    for (int32_t o = 0; o < p.outer; ++o) output[o] = requantize(row_sum(input + o * p.reduce, p.reduce));
    return;
  }
  const bool word_aligned = ((reinterpret_cast<uintptr_t>(input) | uintptr_t(p.inner)) & 3) == 0;
  for (int32_t o = 0; o < p.outer; ++o, input += p.reduce * p.inner, output += p.inner) {
    // The reduced rows as one run of `reduce` pixels of `inner` channels.
    const PoolWindow rows{input, 1, p.reduce, 0, p.reduce};
    scalar::for_each_channel_pass(rows, p.inner, word_aligned, [&](int32_t c, int32_t n, const int32_t* totals) {
      for (int32_t j = 0; j < n; ++j) output[c + j] = requantize(totals[j]);
    });
  }
}

}  // namespace mcuflow::kernels
