// Sum or mean over the middle axis of [outer][reduce][inner], int8, Armv6-M: the reference's
// int32 sums of the offset inputs, as sum(x) + reduce * input_offset (exact: |sum| < 2^31 for
// the verified reduce), requantized without a 64-bit product or a division (scalar_requantize,
// kernels_scalar.h; two 16-bit products instead of four where 255 * reduce, left-shifted, is at
// most 2^15). The sums run down `inner` columns four channels per word (SWAR,
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
    int32_t totals[kRowPixelBytes] = {};
    for (int32_t r = 0; r < pixels; r += kPoolLanePixels) {
      scalar::add_block_sums<kRowPixelBytes / 4>(x + i + r * kRowPixelBytes, 1,
                                                 pixels - r < kPoolLanePixels ? pixels - r : kPoolLanePixels,
                                                 kRowPixelBytes, 0, totals);
    }
    for (int32_t j = 0; j < kRowPixelBytes; ++j) sum += totals[j];
    i += pixels * kRowPixelBytes;
  }
  for (; i < n; ++i) sum += x[i];
  return sum;
}

// The reference's output stage of a sum of `reduce` int8 values (offsets still to add).
struct SumOutput {
  int32_t offset_sum;  // reduce * input_offset
  int32_t requant[kScalarRequantWords];
  int32_t output_offset, act_min, act_max;
  bool short_sums;  // every left-shifted sum within kScalarShortProduct: two products, not four
};

inline int8_t requantize(int32_t sum, const SumOutput& s) {
  const int32_t x = sum + s.offset_sum;
  const int32_t y = s.short_sums ? rounding_divide_by_pot(scalar_doubling_high_mul_short(wrapping_left_shift(x, s.requant[2]),
                                                                                      uint32_t(s.requant[1]),
                                                                                      uint32_t(s.requant[0])),
                                                          s.requant[3])
                                 : scalar_requantize(x, s.requant);
  return int8_t(clamp_i32(y + s.output_offset, s.act_min, s.act_max));
}

// out[c + j] for the 4 * kWords channels from c on, their words aligned.
template <int32_t kWords>
void reduce_channels(const int8_t* rows, int32_t reduce, int32_t inner, int32_t c, const SumOutput& stage, int8_t* out) {
  int32_t totals[4 * kWords] = {};
  for (int32_t r = 0; r < reduce; r += kPoolLanePixels) {  // blocks of rows the 16-bit lanes hold
    scalar::add_block_sums<kWords>(rows + r * inner + c, 1, reduce - r < kPoolLanePixels ? reduce - r : kPoolLanePixels,
                                   inner, 0, totals);
  }
  for (int32_t j = 0; j < 4 * kWords; ++j) out[c + j] = requantize(totals[j], stage);
}

}  // namespace

void reduce_s8_scalar(const ReduceParams& params, const int8_t* input, int8_t* output) {
  const ReduceParams p = params;  // a copy: the output stores could alias the fields otherwise
  // |sum + offset_sum| <= 255 * reduce.
  const int32_t left_shift = scalar_requant_word(p.multiplier, p.shift, 2);
  const bool short_sums = (int64_t(p.reduce) * 255 << left_shift) <= kScalarShortProduct;
  SumOutput stage{p.reduce * p.input_offset, {}, p.output_offset, p.act_min, p.act_max, short_sums};
  for (int32_t j = 0; j < kScalarRequantWords; ++j) stage.requant[j] = scalar_requant_word(p.multiplier, p.shift, j);
  if (p.inner == 1) {
    for (int32_t o = 0; o < p.outer; ++o) output[o] = requantize(row_sum(input + o * p.reduce, p.reduce), stage);
    return;
  }
  const bool word_aligned = ((reinterpret_cast<uintptr_t>(input) | uintptr_t(p.inner)) & 3) == 0;
  for (int32_t o = 0; o < p.outer; ++o, input += p.reduce * p.inner, output += p.inner) {
    const PoolWindow rows{input, 1, p.reduce, 0, p.reduce};  // the reduced rows as one run of pixels
    int32_t c = 0;
    if (word_aligned) {
      for (; c + 8 <= p.inner; c += 8) reduce_channels<2>(input, p.reduce, p.inner, c, stage, output);
      if (c < p.inner) reduce_channels<1>(input, p.reduce, p.inner, c, stage, output);
      continue;
    }
    for (; c < p.inner; ++c) output[c] = requantize(scalar::channel_sum(rows, c, p.inner), stage);
  }
}

}  // namespace mcuflow::kernels
