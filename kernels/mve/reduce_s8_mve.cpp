// Sum or mean over the middle axis of [outer][reduce][inner], int8, MVE: the reference's int32
// sums of the offset inputs, as sum(x) + reduce * input_offset (exact: |sum| < 2^31 for the
// verified reduce), then its requantization four lanes at a time (mve::Rescale: VQRDMULH, the
// rounding right shift). The sums run down `inner` columns 32 channels per pass in int16 lanes
// (channel_sums.h); with inner 1 each row of `reduce` contiguous values is summed by VADDVA.
#include "channel_sums.h"
#include "mcuflow/kernels/arith.h"

namespace mcuflow::kernels {
namespace {

// The sum of n >= 1 contiguous values: whole vectors unpredicated, then one predicated tail.
inline int32_t row_sum(const int8_t* x, int32_t n) {
  int32_t sum = 0, i = 0;
  for (; i + kMveChunk <= n; i += kMveChunk) sum = vaddvaq_s8(sum, vldrbq_s8(x + i));
  if (i < n) {
    const mve_pred16_t valid = vctp8q(uint32_t(n - i));
    sum = vaddvaq_p_s8(sum, vldrbq_z_s8(x + i, valid), valid);
  }
  return sum;
}

}  // namespace

void reduce_s8_mve(const ReduceParams& params, const int8_t* input, int8_t* output) {
  const ReduceParams p = params;  // a copy: the output stores could alias the fields otherwise
  const int32_t offset_sum = p.reduce * p.input_offset;
  if (p.inner == 1) {
    for (int32_t o = 0; o < p.outer; ++o) {
      const int32_t acc = row_sum(input + o * p.reduce, p.reduce) + offset_sum;
      output[o] = int8_t(clamp_i32(multiply_by_quantized_multiplier(acc, p.multiplier, p.shift) + p.output_offset,
                                   p.act_min, p.act_max));
    }
    return;
  }
  const mve::Rescale rescale(0, p.multiplier, p.shift);
  const int32x4_t lo = vdupq_n_s32(p.act_min), hi = vdupq_n_s32(p.act_max);
  const auto stage = [&](int32x4_t sum) {
    const int32x4_t y = vaddq_n_s32(rescale(vaddq_n_s32(sum, offset_sum)), p.output_offset);
    return vminq_s32(vmaxq_s32(y, lo), hi);
  };
  for (int32_t o = 0; o < p.outer; ++o, input += p.reduce * p.inner, output += p.inner) {
    // The reduced rows as one run of `reduce` pixels of `inner` channels.
    const PoolWindow rows{input, 1, p.reduce, 0, p.reduce};
    mve::for_each_channel_pass(rows, p.inner, [&](int32_t c, const auto& pass) { pass.store(stage, output + c); });
  }
}

}  // namespace mcuflow::kernels
