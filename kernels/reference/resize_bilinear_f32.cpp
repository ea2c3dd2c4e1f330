// Bilinear resize, float32, NHWC, with the compiler's source indices and weights (PyTorch's
// upsample_bilinear2d: interpolate along W in both source rows, then along H).
#include "mcuflow/kernels/kernels.h"
#include "resize_bilinear_common.h"

namespace mcuflow::kernels {

void resize_bilinear_f32(const ResizeBilinearParams& p, const float* input, const int32_t* taps,
                         const float* weights, float* output) {
  resize_bilinear(p, input, taps, weights, output, [](float a, float b, float c, float d, float wx, float wy) {
    return (1.0f - wy) * ((1.0f - wx) * a + wx * b) + wy * ((1.0f - wx) * c + wx * d);
  });
}

}  // namespace mcuflow::kernels
