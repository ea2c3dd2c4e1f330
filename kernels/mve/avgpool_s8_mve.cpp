// Average pooling, int8, MVE: window sums of 32 channels at a time in int16 lanes
// (channel_sums.h). The division by the window's count n >= 2 is a
// multiply by R = ceil(2^32 / n) keeping the high word (VMULH.U32) of x = |sum| + n / 2:
// floor(x * R / 2^32) = floor(x / n) whenever x * (R * n - 2^32) < 2^32, and R * n - 2^32 <= n - 1
// while x <= 128 * n + n / 2, which holds for n <= kMveExactAverageCount. The sign of the sum
// is then restored, which is the reference's rounding half away from zero. Larger windows
// (rare) divide lane by lane.
#include "channel_sums.h"

namespace mcuflow::kernels {
namespace {

using mve::add_block_sums;
constexpr int32_t kLanes = mve::kSumLanes, kVectorsPerPass = mve::kSumVectorsPerPass;
constexpr int32_t kMveExactAverageCount = 5781;  // the largest n with (128 n + n / 2)(n - 1) < 2^32

// The rounded, clamped averages of four sums (count 1: the sums; otherwise reciprocal applies).
inline int32x4_t averages(int32x4_t sum, int32_t count, uint32_t reciprocal, int32x4_t lo, int32x4_t hi) {
  const mve_pred16_t negative = vcmpltq_n_s32(sum, 0);
  uint32x4_t q = vreinterpretq_u32_s32(vabsq_s32(sum));
  if (count > 1) q = vmulhq_u32(vaddq_n_u32(q, uint32_t(count / 2)), vdupq_n_u32(reciprocal));
  const int32x4_t avg = vnegq_m_s32(vreinterpretq_s32_u32(q), vreinterpretq_s32_u32(q), negative);
  return vminq_s32(vmaxq_s32(avg, lo), hi);
}

template <int32_t kVectors, bool kPartial>
void average_channels(const PoolParams& p, const PoolWindow& window, int32_t c, int8_t* out) {
  mve_pred16_t valid[kVectors];
  for (int32_t v = 0; v < kVectors; ++v) valid[v] = vctp16q(uint32_t(p.c - c - kLanes * v));
  int32_t totals[kVectors * kLanes] = {};
  window.for_each_block(kPoolLanePixels, p.c, [&](const int8_t* first, int32_t rows, int32_t cols) {
    add_block_sums<kVectors, kPartial>(first + c, rows, cols, p.c, window.row_step, valid, totals);
  });
  if (window.count > kMveExactAverageCount) {
    for (int32_t v = 0; v < kVectors; ++v) {
      for (int32_t j = 0; j < kLanes && c + kLanes * v + j < p.c; ++j) {
        out[c + kLanes * v + j] = pool_average(totals[kLanes * v + (j % 2) * 4 + j / 2], window.count, p.act_min, p.act_max);
      }
    }
    return;
  }
  // ceil(2^32 / count) for count >= 2.
  const uint32_t reciprocal = window.count > 1 ? 0xFFFFFFFFu / uint32_t(window.count) + 1 : 0;
  const int32x4_t lo = vdupq_n_s32(p.act_min), hi = vdupq_n_s32(p.act_max);
  for (int32_t v = 0; v < kVectors; ++v) {
    const int32x4_t even = averages(vld1q_s32(totals + kLanes * v), window.count, reciprocal, lo, hi);
    const int32x4_t odd = averages(vld1q_s32(totals + kLanes * v + 4), window.count, reciprocal, lo, hi);
    const int16x8_t both = vmovntq_s32(vmovnbq_s32(vdupq_n_s16(0), even), odd);
    if (kPartial) vstrbq_p_s16(out + c + kLanes * v, both, valid[v]);
    else vstrbq_s16(out + c + kLanes * v, both);
  }
}

}  // namespace

void avgpool_s8_mve(const PoolParams& params, const int8_t* input, int8_t* output) {
  const PoolParams p = params;  // a copy: the output stores could alias the fields otherwise
  for_each_pool_pixel(p, input, output, [&](const PoolWindow& window, int8_t* out) {
    int32_t c = 0;
    for (; c + kLanes * kVectorsPerPass <= p.c; c += kLanes * kVectorsPerPass) {
      average_channels<kVectorsPerPass, false>(p, window, c, out);
    }
    for (; c + kLanes <= p.c; c += kLanes) average_channels<1, false>(p, window, c, out);
    if (c < p.c) average_channels<1, true>(p, window, c, out);
  });
}

}  // namespace mcuflow::kernels
