// Sum or mean over the middle axis of [outer][reduce][inner], int8, DSP extension: the
// reference's int32 sums of the offset inputs, as sum(x) + reduce * input_offset (exact: |sum| <
// 2^31 for the verified reduce), requantized per output as the reference does (SMULL). The sums
// run down `inner` columns sixteen channels per pass in 16-bit halves (channel_sums.h); with
// inner 1 each row of `reduce` contiguous values is summed as pixels of sixteen channels.
#include "channel_sums.h"

namespace mcuflow::kernels {
namespace {

// The sum of n >= 1 contiguous values.
inline int32_t row_sum(const int8_t* x, int32_t n) {
  const int32_t pixels = n / dsp::kSumChannelsPerPass;
  int32_t sum = 0;
  if (pixels > 0) {
    const PoolWindow run{x, 1, pixels, 0, pixels};
    dsp::for_each_channel_pass(run, dsp::kSumChannelsPerPass, [&](int32_t, int32_t, const int32_t* totals) {
      for (int32_t j = 0; j < dsp::kSumChannelsPerPass; ++j) sum += totals[j];
    });
  }
  for (int32_t i = pixels * dsp::kSumChannelsPerPass; i < n; ++i) sum += x[i];
  return sum;
}

}  // namespace

void reduce_s8_dsp(const ReduceParams& params, const int8_t* input, int8_t* output) {
  const ReduceParams p = params;  // a copy: the output stores could alias the fields otherwise
  const int32_t offset_sum = p.reduce * p.input_offset;
  const auto requantize = [&](int32_t sum) {
    const int32_t y = multiply_by_quantized_multiplier(sum + offset_sum, p.multiplier, p.shift) + p.output_offset;
    return int8_t(clamp_i32(y, p.act_min, p.act_max));
  };
  if (p.inner == 1) {
    for (int32_t o = 0; o < p.outer; ++o) output[o] = requantize(row_sum(input + o * p.reduce, p.reduce));
    return;
  }
  for (int32_t o = 0; o < p.outer; ++o, input += p.reduce * p.inner, output += p.inner) {
    // The reduced rows as one run of `reduce` pixels of `inner` channels.
    const PoolWindow rows{input, 1, p.reduce, 0, p.reduce};
    dsp::for_each_channel_pass(rows, p.inner, [&](int32_t c, int32_t n, const int32_t* totals) {
      for (int32_t j = 0; j < n; ++j) output[c + j] = requantize(totals[j]);
    });
  }
}

}  // namespace mcuflow::kernels
