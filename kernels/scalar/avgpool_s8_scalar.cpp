// Average pooling, int8, Armv6-M: window sums of four channels per word load (SWAR,
// channel_sums.h). Division by the window's count (rounded half away from zero) multiplies by
// the compiler's reciprocal (kernels_scalar.h). Inputs whose words are not 4-byte aligned (the
// channel count not a multiple of four) are summed byte by byte.
#include "channel_sums.h"
#include "mcuflow/kernels/kernels_scalar.h"

namespace mcuflow::kernels {
namespace {

// The average of a window sum with count n, rounded half away from zero, clamped.
inline int8_t average(int32_t sum, int32_t n, uint32_t reciprocal, int32_t act_min, int32_t act_max) {
  const uint32_t magnitude = uint32_t(sum < 0 ? -sum : sum) + uint32_t(n >> 1);
  const int32_t q = int32_t((magnitude * reciprocal) >> kScalarReciprocalShift);
  int32_t avg = sum < 0 ? -q : q;
  avg = avg < act_min ? act_min : avg;
  return int8_t(avg > act_max ? act_max : avg);
}

using scalar::add_block_sums;

template <int32_t kWords>
void average_channels(const PoolParams& p, const PoolWindow& window, int32_t c, uint32_t reciprocal, int8_t* out) {
  int32_t totals[4 * kWords] = {};
  window.for_each_block(kPoolLanePixels, p.c, [&](const int8_t* first, int32_t rows, int32_t cols) {
    add_block_sums<kWords>(first + c, rows, cols, p.c, window.row_step, totals);
  });
  for (int32_t j = 0; j < 4 * kWords; ++j) out[c + j] = average(totals[j], window.count, reciprocal, p.act_min, p.act_max);
}

}  // namespace

void avgpool_s8_scalar(const PoolParams& params, const int8_t* input, const int32_t* reciprocals, int8_t* output) {
  const PoolParams p = params;  // a copy: the output stores could alias the fields otherwise
  const bool word_aligned = ((reinterpret_cast<uintptr_t>(input) | uintptr_t(p.c)) & 3) == 0;
  // Plain loops, not for_each_pool_pixel: GCC's Thumb-1 code for that lambda took 1.2-1.8x the
  // instructions (QEMU) of these loops.
  for (int32_t oy = 0; oy < p.out_h; ++oy) {
    for (int32_t ox = 0; ox < p.out_w; ++ox, output += p.c) {
      const PoolWindow window = pool_window(p, input, oy, ox);
      const uint32_t reciprocal = uint32_t(reciprocals[window.count - 1]);
      int32_t c = 0;
      if (word_aligned) {
        for (; c + 8 <= p.c; c += 8) average_channels<2>(p, window, c, reciprocal, output);
        if (c < p.c) average_channels<1>(p, window, c, reciprocal, output);
        continue;
      }
      for (; c < p.c; ++c) {
        int32_t sum = 0;
        for (int32_t r = 0; r < window.rows; ++r) {
          const int8_t* x = window.first + r * window.row_step + c;
          for (int32_t i = 0; i < window.cols; ++i, x += p.c) sum += *x;
        }
        output[c] = average(sum, window.count, reciprocal, p.act_min, p.act_max);
      }
    }
  }
}

}  // namespace mcuflow::kernels
