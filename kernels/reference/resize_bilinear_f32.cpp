// Bilinear resize, float32, NHWC, with the compiler's source indices and weights (PyTorch's
// upsample_bilinear2d: interpolate along W in both source rows, then along H).
#include "mcuflow/kernels/kernels.h"

namespace mcuflow::kernels {

void resize_bilinear_f32(const ResizeBilinearParams& p, const float* input, const int32_t* taps,
                         const float* weights, float* output) {
  const int32_t* col_taps = taps + 2 * p.out_h;
  const float* col_weights = weights + p.out_h;
  const int32_t row_stride = p.in_w * p.channels;
  for (int32_t oy = 0; oy < p.out_h; ++oy) {
    const float* row0 = input + taps[2 * oy] * row_stride;
    const float* row1 = input + taps[2 * oy + 1] * row_stride;
    const float hy1 = weights[oy], hy0 = 1.0f - hy1;
    for (int32_t ox = 0; ox < p.out_w; ++ox) {
      const int32_t x0 = col_taps[2 * ox] * p.channels, x1 = col_taps[2 * ox + 1] * p.channels;
      const float wx1 = col_weights[ox], wx0 = 1.0f - wx1;
      for (int32_t c = 0; c < p.channels; ++c) {
        *output++ = hy0 * (wx0 * row0[x0 + c] + wx1 * row0[x1 + c]) + hy1 * (wx0 * row1[x0 + c] + wx1 * row1[x1 + c]);
      }
    }
  }
}

}  // namespace mcuflow::kernels
