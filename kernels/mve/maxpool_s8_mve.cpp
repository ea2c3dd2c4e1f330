// Max pooling, int8, MVE: VMAX.S8 over 64 channels at a time (16 per vector; then 32 or 16), the
// last channels tail-predicated. The running maxima start at act_min (max(act_min, window) is the
// reference's lower clamp); VMIN applies the upper clamp.
#include "mve_blocks.h"
#include "mcuflow/kernels/pool_window.h"

namespace mcuflow::kernels {
namespace {

constexpr int32_t kVectorsPerPass = 4;  // 64 channels

template <int32_t kVectors, bool kPartial>
void max_channels(const PoolParams& p, const PoolWindow& window, int32_t c, int8_t* out) {
  mve_pred16_t valid[kVectors];
  int8x16_t m[kVectors];
  for (int32_t v = 0; v < kVectors; ++v) {
    valid[v] = vctp8q(uint32_t(p.c - c - kMveChunk * v));
    m[v] = vdupq_n_s8(int8_t(p.act_min));
  }
  const int8_t* x = window.first + c;
  for (int32_t r = 0; r < window.rows; ++r, x += window.row_step) {
    const int8_t* px = x;
    for (int32_t i = 0; i < window.cols; ++i, px += p.c) {
      for (int32_t v = 0; v < kVectors; ++v) {
        m[v] = vmaxq_s8(m[v], kPartial ? vldrbq_z_s8(px + kMveChunk * v, valid[v]) : vldrbq_s8(px + kMveChunk * v));
      }
    }
  }
  const int8x16_t hi = vdupq_n_s8(int8_t(p.act_max));
  for (int32_t v = 0; v < kVectors; ++v) {
    if (kPartial) vstrbq_p_s8(out + c + kMveChunk * v, vminq_s8(m[v], hi), valid[v]);
    else vstrbq_s8(out + c + kMveChunk * v, vminq_s8(m[v], hi));
  }
}

}  // namespace

void maxpool_s8_mve(const PoolParams& params, const int8_t* input, int8_t* output) {
  const PoolParams p = params;  // a copy: the output stores could alias the fields otherwise
  for_each_pool_pixel(p, input, output, [&](const PoolWindow& window, int8_t* out) {
    int32_t c = 0;
    for (; c + kMveChunk * kVectorsPerPass <= p.c; c += kMveChunk * kVectorsPerPass) {
      max_channels<kVectorsPerPass, false>(p, window, c, out);
    }
    if (c + 2 * kMveChunk <= p.c) {
      max_channels<2, false>(p, window, c, out);
      c += 2 * kMveChunk;
    }
    for (; c + kMveChunk <= p.c; c += kMveChunk) max_channels<1, false>(p, window, c, out);
    if (c < p.c) max_channels<1, true>(p, window, c, out);
  });
}

}  // namespace mcuflow::kernels
