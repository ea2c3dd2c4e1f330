// Average pooling, int8, MVE: window sums of 16 channels at a time in int32 lanes, then the
// reference's division (round half away from zero) per channel with the core's divider: MVE
// has no integer division, and a reciprocal multiply would need proof of exactness.
#include "mcuflow/kernels/arith.h"
#include "mcuflow/kernels/kernels_mve.h"

namespace mcuflow::kernels {
namespace {

struct Window {
  int32_t ky_begin, ky_end, kx_begin, kx_end;  // taps inside the input
};

// sums[i] = the window sum of channel c + i, i < 16 (`channels` of them when kPartial).
template <bool kPartial>
void window_sums(const PoolParams& p, const int8_t* input, int32_t iy0, int32_t ix0, int32_t c, const Window& w,
                 int32_t channels, int32_t* sums) {
  const mve_pred16_t p0 = vctp32q(uint32_t(channels)), p1 = vctp32q(uint32_t(channels - 4)),
                     p2 = vctp32q(uint32_t(channels - 8)), p3 = vctp32q(uint32_t(channels - 12));
  auto load = [&](const int8_t* x, mve_pred16_t valid) { return kPartial ? vldrbq_z_s32(x, valid) : vldrbq_s32(x); };
  int32x4_t s0 = vdupq_n_s32(0), s1 = s0, s2 = s0, s3 = s0;
  for (int32_t ky = w.ky_begin; ky < w.ky_end; ++ky) {
    const int8_t* x = input + ((iy0 + ky) * p.in_w + ix0 + w.kx_begin) * p.c + c;
    for (int32_t kx = w.kx_begin; kx < w.kx_end; ++kx, x += p.c) {
      s0 = vaddq_s32(s0, load(x, p0));
      s1 = vaddq_s32(s1, load(x + 4, p1));
      s2 = vaddq_s32(s2, load(x + 8, p2));
      s3 = vaddq_s32(s3, load(x + 12, p3));
    }
  }
  vst1q_s32(sums, s0);
  vst1q_s32(sums + 4, s1);
  vst1q_s32(sums + 8, s2);
  vst1q_s32(sums + 12, s3);
}

}  // namespace

void avgpool_s8_mve(const PoolParams& p, const int8_t* input, int8_t* output) {
  for (int32_t oy = 0; oy < p.out_h; ++oy) {
    const int32_t iy0 = oy * p.stride_h - p.pad_top;
    const int32_t ky_begin = iy0 < 0 ? -iy0 : 0, ky_end = p.k_h < p.in_h - iy0 ? p.k_h : p.in_h - iy0;
    for (int32_t ox = 0; ox < p.out_w; ++ox, output += p.c) {
      const int32_t ix0 = ox * p.stride_w - p.pad_left;
      const int32_t kx_begin = ix0 < 0 ? -ix0 : 0, kx_end = p.k_w < p.in_w - ix0 ? p.k_w : p.in_w - ix0;
      const Window window{ky_begin, ky_end, kx_begin, kx_end};
      const int32_t count = (ky_end - ky_begin) * (kx_end - kx_begin);  // >= 1 (verified)
      for (int32_t c = 0; c < p.c; c += kMveChunk) {
        const int32_t channels = p.c - c < kMveChunk ? p.c - c : kMveChunk;
        int32_t sums[kMveChunk];
        if (channels == kMveChunk) window_sums<false>(p, input, iy0, ix0, c, window, channels, sums);
        else window_sums<true>(p, input, iy0, ix0, c, window, channels, sums);
        for (int32_t i = 0; i < channels; ++i) {
          const int32_t sum = sums[i];
          const int32_t avg = sum > 0 ? (sum + count / 2) / count : (sum - count / 2) / count;
          output[c + i] = static_cast<int8_t>(clamp_i32(avg, p.act_min, p.act_max));
        }
      }
    }
  }
}

}  // namespace mcuflow::kernels
