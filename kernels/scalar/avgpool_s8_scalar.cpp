// Average pooling, int8, Armv6-M: window sums of four channels per word load (SWAR,
// channel_sums.h). Division by the window's count (rounded half away from zero) multiplies by
// the compiler's reciprocal (kernels_scalar.h).
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
      scalar::for_each_channel_pass(window, p.c, word_aligned, [&](int32_t c, int32_t n, const int32_t* totals) {
        for (int32_t j = 0; j < n; ++j) output[c + j] = average(totals[j], window.count, reciprocal, p.act_min, p.act_max);
      });
    }
  }
}

}  // namespace mcuflow::kernels
