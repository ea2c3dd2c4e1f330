// Bilinear resize, int8, NHWC: each output element is the weighted sum of its four source
// elements with the compiler's fixed-point weights, divided by 2^(2 kResizeWeightBits) with
// rounding half away from zero (params.h). Integers only, so every platform computes the same.
#include "mcuflow/kernels/kernels.h"

namespace mcuflow::kernels {

void resize_bilinear_s8(const ResizeBilinearParams& p, const int8_t* input, const int32_t* taps,
                        const int32_t* weights, int8_t* output) {
  constexpr int32_t kOne = 1 << kResizeWeightBits;
  constexpr int32_t kHalf = 1 << (2 * kResizeWeightBits - 1);
  const int32_t* col_taps = taps + 2 * p.out_h;
  const int32_t* col_weights = weights + p.out_h;
  const int32_t row_stride = p.in_w * p.channels;
  for (int32_t oy = 0; oy < p.out_h; ++oy) {
    const int8_t* row0 = input + taps[2 * oy] * row_stride;
    const int8_t* row1 = input + taps[2 * oy + 1] * row_stride;
    const int32_t wy1 = weights[oy], wy0 = kOne - wy1;
    for (int32_t ox = 0; ox < p.out_w; ++ox) {
      const int32_t x0 = col_taps[2 * ox] * p.channels, x1 = col_taps[2 * ox + 1] * p.channels;
      const int32_t wx1 = col_weights[ox], wx0 = kOne - wx1;
      for (int32_t c = 0; c < p.channels; ++c) {
        const int32_t top = row0[x0 + c] * wx0 + row0[x1 + c] * wx1;
        const int32_t bottom = row1[x0 + c] * wx0 + row1[x1 + c] * wx1;
        const int32_t sum = top * wy0 + bottom * wy1;
        const int32_t rounded = sum >= 0 ? (sum + kHalf) >> (2 * kResizeWeightBits)
                                         : -((-sum + kHalf) >> (2 * kResizeWeightBits));
        *output++ = static_cast<int8_t>(rounded);
      }
    }
  }
}

}  // namespace mcuflow::kernels
