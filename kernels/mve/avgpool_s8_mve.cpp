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

constexpr int32_t kMveExactAverageCount = 5781;  // the largest n with (128 n + n / 2)(n - 1) < 2^32

// The rounded, clamped averages of four sums (count 1: the sums; otherwise reciprocal applies).
inline int32x4_t averages(int32x4_t sum, int32_t count, uint32_t reciprocal, int32x4_t lo, int32x4_t hi) {
  const mve_pred16_t negative = vcmpltq_n_s32(sum, 0);
  uint32x4_t q = vreinterpretq_u32_s32(vabsq_s32(sum));
  if (count > 1) q = vmulhq_u32(vaddq_n_u32(q, uint32_t(count / 2)), vdupq_n_u32(reciprocal));
  const int32x4_t avg = vnegq_m_s32(vreinterpretq_s32_u32(q), vreinterpretq_s32_u32(q), negative);
  return vminq_s32(vmaxq_s32(avg, lo), hi);
}

}  // namespace

void avgpool_s8_mve(const PoolParams& params, const int8_t* input, int8_t* output) {
  const PoolParams p = params;  // a copy: the output stores could alias the fields otherwise
  const int32x4_t lo = vdupq_n_s32(p.act_min), hi = vdupq_n_s32(p.act_max);
  for_each_pool_pixel(p, input, output, [&](const PoolWindow& window, int8_t* out) {
    // ceil(2^32 / count) for count >= 2.
    const uint32_t reciprocal = window.count > 1 ? 0xFFFFFFFFu / uint32_t(window.count) + 1 : 0;
    mve::for_each_channel_pass(window, p.c, [&](int32_t c, const auto& pass) {
      if (window.count > kMveExactAverageCount) {
        for (int32_t j = 0; j < int32_t(sizeof(pass.totals) / 4) && c + j < p.c; ++j) {
          out[c + j] = pool_average(pass.totals[mve::total_of_channel(j)], window.count, p.act_min, p.act_max);
        }
        return;
      }
      pass.store([&](int32x4_t sum) { return averages(sum, window.count, reciprocal, lo, hi); }, out + c);
    });
  });
}

}  // namespace mcuflow::kernels
