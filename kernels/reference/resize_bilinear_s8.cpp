// Bilinear resize, int8, NHWC: each output element is the weighted sum of its four source
// elements with the compiler's fixed-point weights, divided by 2^(2 kResizeWeightBits) with
// rounding half away from zero (params.h). Integers only, so every platform computes the same.
#include "mcuflow/kernels/kernels.h"
#include "resize_bilinear_common.h"

namespace mcuflow::kernels {

void resize_bilinear_s8(const ResizeBilinearParams& p, const int8_t* input, const int32_t* taps,
                        const int32_t* weights, int8_t* output) {
  constexpr int32_t kOne = 1 << kResizeWeightBits;
  constexpr int32_t kHalf = 1 << (2 * kResizeWeightBits - 1);
  resize_bilinear(p, input, taps, weights, output,
                  [](int32_t a, int32_t b, int32_t c, int32_t d, int32_t wx, int32_t wy) {
                    const int32_t top = a * (kOne - wx) + b * wx;
                    const int32_t bottom = c * (kOne - wx) + d * wx;
                    const int32_t sum = top * (kOne - wy) + bottom * wy;
                    const int32_t rounded = sum >= 0 ? (sum + kHalf) >> (2 * kResizeWeightBits)
                                                     : -((-sum + kHalf) >> (2 * kResizeWeightBits));
                    return static_cast<int8_t>(rounded);
                  });
}

}  // namespace mcuflow::kernels
