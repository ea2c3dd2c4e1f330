// Max pooling, int8, Armv6-M: four channels per pass with their running maxima in registers,
// started at act_min (max(act_min, window) is the reference's lower clamp), the window's pixels
// read as words when the channel count keeps them 4-byte aligned (SXTB and shifts split them),
// byte by byte otherwise.
#include <cstring>

#include "mcuflow/kernels/kernels_scalar.h"
#include "mcuflow/kernels/pool_window.h"

namespace mcuflow::kernels {
namespace {

inline int32_t max_i32(int32_t a, int32_t b) { return a > b ? a : b; }

// out[c + j] for j < channels (at most 4): kWordAligned reads a pixel's four channels as one word.
template <bool kWordAligned>
void max_channels(const PoolParams& p, const PoolWindow& window, int32_t c, int32_t channels, int8_t* out) {
  int32_t m0 = p.act_min, m1 = p.act_min, m2 = p.act_min, m3 = p.act_min;
  const int8_t* x = window.first + c;
  for (int32_t r = 0; r < window.rows; ++r, x += window.row_step) {
    const int8_t* px = x;
    const int8_t* end = px + window.cols * p.c;
    do {
      if (kWordAligned) {
        int32_t v;
        std::memcpy(&v, __builtin_assume_aligned(px, 4), 4);  // a plain LDR
        m0 = max_i32(m0, int8_t(v));
        m1 = max_i32(m1, int32_t(uint32_t(v) << 16) >> 24);
        m2 = max_i32(m2, int32_t(uint32_t(v) << 8) >> 24);
        m3 = max_i32(m3, v >> 24);
      } else {
        m0 = max_i32(m0, px[0]);
        if (channels > 1) m1 = max_i32(m1, px[1]);
        if (channels > 2) m2 = max_i32(m2, px[2]);
        if (channels > 3) m3 = max_i32(m3, px[3]);
      }
      px += p.c;
    } while (px != end);
  }
  const int32_t m[4] = {m0, m1, m2, m3};
  for (int32_t j = 0; j < channels; ++j) out[c + j] = int8_t(m[j] < p.act_max ? m[j] : p.act_max);
}

}  // namespace

void maxpool_s8_scalar(const PoolParams& params, const int8_t* input, int8_t* output) {
  const PoolParams p = params;  // a copy: the output stores could alias the fields otherwise
  const bool word_aligned = ((reinterpret_cast<uintptr_t>(input) | uintptr_t(p.c)) & 3) == 0;
  // Plain loops, not for_each_pool_pixel: GCC's Thumb-1 code for that lambda took 1.2-1.8x the
  // instructions (QEMU) of these loops.
  for (int32_t oy = 0; oy < p.out_h; ++oy) {
    for (int32_t ox = 0; ox < p.out_w; ++ox, output += p.c) {
      const PoolWindow window = pool_window(p, input, oy, ox);
      for (int32_t c = 0; c < p.c; c += 4) {
        const int32_t channels = p.c - c < 4 ? p.c - c : 4;
        if (word_aligned) max_channels<true>(p, window, c, channels, output);
        else max_channels<false>(p, window, c, channels, output);
      }
    }
  }
}

}  // namespace mcuflow::kernels
