// The window walk shared by the pooling kernels: every output element reduces the part of
// its window that lies inside the input (padding never contributes).
#pragma once
#include <cstdint>

#include "mcuflow/kernels/params.h"
#include "window.h"

namespace mcuflow::kernels::detail {

// acc = init; acc = combine(acc, x) over the window; *out = finish(acc, valid element count).
template <typename T, typename Acc, typename Combine, typename Finish>
void pool_windows(const PoolParams& p, const T* input, T* output, Acc init, Combine combine, Finish finish) {
  for (int32_t oy = 0; oy < p.out_h; ++oy) {
    const int32_t iy0 = oy * p.stride_h - p.pad_top;
    const TapRange rows = valid_taps(iy0, p.k_h, 1, p.in_h);
    for (int32_t ox = 0; ox < p.out_w; ++ox) {
      const int32_t ix0 = ox * p.stride_w - p.pad_left;
      const TapRange cols = valid_taps(ix0, p.k_w, 1, p.in_w);
      const int32_t count = (rows.end - rows.begin) * (cols.end - cols.begin);
      for (int32_t c = 0; c < p.c; ++c) {
        Acc acc = init;
        for (int32_t ky = rows.begin; ky < rows.end; ++ky) {
          for (int32_t kx = cols.begin; kx < cols.end; ++kx) {
            acc = combine(acc, input[((iy0 + ky) * p.in_w + ix0 + kx) * p.c + c]);
          }
        }
        *output++ = finish(acc, count);
      }
    }
  }
}

// sum / count rounded half away from zero (count >= 1): C++ division truncates, so the sum is
// first moved by half the divisor away from zero.
template <typename Acc>
Acc rounded_average(Acc sum, int32_t count) {
  return sum > 0 ? (sum + count / 2) / count : (sum - count / 2) / count;
}

}  // namespace mcuflow::kernels::detail
