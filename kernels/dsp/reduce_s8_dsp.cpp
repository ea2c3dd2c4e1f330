// Sum or mean over the middle axis of [outer][reduce][inner], int8, DSP extension: the
// reference's int32 sums of the offset inputs, as sum(x) + reduce * input_offset (exact: |sum| <
// 2^31 for the verified reduce), requantized per output by SMMLAR where the shift is a right
// shift of at most 21 (DspChannel, kernels_dsp.h: exact while twice |sum| < 2^31), else as the
// reference does. The sums run down `inner` columns sixteen channels per pass in 16-bit halves
// (channel_sums.h); with inner 1 each row of `reduce` contiguous values is summed as pixels of
// sixteen channels.
#include "channel_sums.h"

namespace mcuflow::kernels {
namespace {

constexpr int32_t kRowPixelBytes = 4 * dsp::kSumWordsPerPass;  // inner 1: values per pixel

// The sum of n >= 1 contiguous values.
inline int32_t row_sum(const int8_t* x, int32_t n) {
  const int32_t pixels = n / kRowPixelBytes;
  int32_t sum = 0;
  if (pixels > 0) {
    int32_t totals[kRowPixelBytes] = {};
    const PoolWindow run{x, 1, pixels, 0, pixels};
    run.for_each_block(kPoolLanePixels, kRowPixelBytes, [&](const int8_t* first, int32_t rows, int32_t cols) {
      dsp::add_block_sums<dsp::kSumWordsPerPass>(first, rows, cols, kRowPixelBytes, 0, totals);
    });
    for (int32_t j = 0; j < kRowPixelBytes; ++j) sum += totals[j];
  }
  for (int32_t i = pixels * kRowPixelBytes; i < n; ++i) sum += x[i];
  return sum;
}

}  // namespace

void reduce_s8_dsp(const ReduceParams& params, const int8_t* input, int8_t* output) {
  const ReduceParams p = params;  // a copy: the output stores could alias the fields otherwise
  const int32_t offset_sum = p.reduce * p.input_offset;
  // |2 * (sum + offset_sum)| <= 2 * 255 * reduce.
  const bool fast = dsp_fast_channel(0, p.shift, 0) && int64_t(p.reduce) * 255 < (int64_t{1} << 30);
  const DspChannel channel = fast ? dsp_fast_channel_of(offset_sum, p.multiplier, p.shift, 2 * p.output_offset + 1)
                                  : DspChannel{0, p.multiplier, 0, -1, offset_sum, p.shift};
  const auto requantize = [&](int32_t sum) {
    return int8_t(clamp_i32(dsp_requantize(2 * sum + channel.acc_init, channel, p.output_offset), p.act_min, p.act_max));
  };
  if (p.inner == 1) {
    for (int32_t o = 0; o < p.outer; ++o) output[o] = requantize(row_sum(input + o * p.reduce, p.reduce));
    return;
  }
  for (int32_t o = 0; o < p.outer; ++o, input += p.reduce * p.inner, output += p.inner) {
    const PoolWindow rows{input, 1, p.reduce, 0, p.reduce};  // the reduced rows as one run of pixels
    dsp::sum_channels(rows, p.inner, requantize, output);
  }
}

}  // namespace mcuflow::kernels
