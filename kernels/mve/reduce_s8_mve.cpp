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

// One pass of kVectors * 8 channels from channel c on (kPartial: the channels - c < 8 left):
// their sums down the `reduce` rows (the totals' order: channel_sums.h), each four through
// `stage`, narrowed back into channel order (VMOVNB / VMOVNT) and stored.
template <int32_t kVectors, bool kPartial, typename Stage>
void reduce_channels(const int8_t* rows, int32_t reduce, int32_t inner, int32_t c, Stage stage, int8_t* out) {
  using mve::kSumLanes;
  mve_pred16_t valid[kVectors];
  for (int32_t v = 0; v < kVectors; ++v) valid[v] = vctp16q(uint32_t(inner - c - kSumLanes * v));
  int32_t totals[kVectors * kSumLanes] = {};
  const PoolWindow run{rows, 1, reduce, 0, reduce};  // the reduced rows as one run of pixels
  run.for_each_block(kPoolLanePixels, inner, [&](const int8_t* first, int32_t block_rows, int32_t cols) {
    mve::add_block_sums<kVectors, kPartial>(first + c, block_rows, cols, inner, 0, valid, totals);
  });
  for (int32_t v = 0; v < kVectors; ++v) {
    const int32x4_t even = stage(vld1q_s32(totals + kSumLanes * v)), odd = stage(vld1q_s32(totals + kSumLanes * v + 4));
    const int16x8_t both = vmovntq_s32(vmovnbq_s32(vdupq_n_s16(0), even), odd);
    if (kPartial) vstrbq_p_s16(out + c + kSumLanes * v, both, valid[v]);
    else vstrbq_s16(out + c + kSumLanes * v, both);
  }
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
  constexpr int32_t kPassChannels = mve::kSumLanes * mve::kSumVectorsPerPass;
  for (int32_t o = 0; o < p.outer; ++o, input += p.reduce * p.inner, output += p.inner) {
    int32_t c = 0;
    for (; c + kPassChannels <= p.inner; c += kPassChannels) {
      reduce_channels<mve::kSumVectorsPerPass, false>(input, p.reduce, p.inner, c, stage, output);
    }
    for (; c + mve::kSumLanes <= p.inner; c += mve::kSumLanes) {
      reduce_channels<1, false>(input, p.reduce, p.inner, c, stage, output);
    }
    if (c < p.inner) reduce_channels<1, true>(input, p.reduce, p.inner, c, stage, output);
  }
}

}  // namespace mcuflow::kernels
