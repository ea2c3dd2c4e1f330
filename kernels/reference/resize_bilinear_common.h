// The walk both bilinear resize kernels share: for each output pixel of an NHWC image (batch 1)
// its four source pixels from the compiler's tables (params.h ResizeBilinearParams), each
// channel combined by `combine(top_left, top_right, bottom_left, bottom_right, wx, wy)` with the
// weights of the second column and the second row.
#pragma once
#include "mcuflow/kernels/params.h"

namespace mcuflow::kernels {

template <typename T, typename W, typename Combine>
void resize_bilinear(const ResizeBilinearParams& p, const T* input, const int32_t* taps, const W* weights,
                     T* output, Combine combine) {
  const int32_t* col_taps = taps + 2 * p.out_h;
  const W* col_weights = weights + p.out_h;
  const int32_t row_stride = p.in_w * p.channels;
  for (int32_t oy = 0; oy < p.out_h; ++oy) {
    const T* row0 = input + taps[2 * oy] * row_stride;
    const T* row1 = input + taps[2 * oy + 1] * row_stride;
    const W wy = weights[oy];
    for (int32_t ox = 0; ox < p.out_w; ++ox) {
      const int32_t x0 = col_taps[2 * ox] * p.channels, x1 = col_taps[2 * ox + 1] * p.channels;
      const W wx = col_weights[ox];
      for (int32_t c = 0; c < p.channels; ++c)
        *output++ = combine(row0[x0 + c], row0[x1 + c], row1[x0 + c], row1[x1 + c], wx, wy);
    }
  }
}

}  // namespace mcuflow::kernels
