// Layer normalization over the last axis, float32 (PyTorch: biased variance, eps inside the
// square root), then the per-element affine weight and bias. Two passes over each row.
#include <cmath>

#include "mcuflow/kernels/kernels.h"

namespace mcuflow::kernels {

void layer_norm_f32(const LayerNormParams& p, const float* input, const float* weight, const float* bias,
                    float* output) {
  const float inv_depth = 1.0f / static_cast<float>(p.depth);
  for (int32_t r = 0; r < p.rows; ++r) {
    const float* in = input + r * p.depth;
    float* out = output + r * p.depth;
    float mean = 0.0f;
    for (int32_t i = 0; i < p.depth; ++i) mean += in[i];
    mean *= inv_depth;
    float var = 0.0f;
    for (int32_t i = 0; i < p.depth; ++i) var += (in[i] - mean) * (in[i] - mean);
    const float inv_std = 1.0f / std::sqrt(var * inv_depth + p.eps);
    for (int32_t i = 0; i < p.depth; ++i) out[i] = (in[i] - mean) * inv_std * weight[i] + bias[i];
  }
}

}  // namespace mcuflow::kernels
