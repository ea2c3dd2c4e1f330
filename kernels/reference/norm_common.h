// The float normalization shared by group_norm_f32 and layer_norm_f32 (one group of a row):
// PyTorch's definition, biased variance and eps inside the square root, two passes.
#pragma once
#include <cmath>
#include <cstdint>

#include "mcuflow/kernels/params.h"

namespace mcuflow::kernels::detail {

inline void group_norm_f32(const GroupNormParams& p, const float* input, const float* weight, const float* bias,
                           float* output) {
  const int32_t channels = p.groups * p.group_size;
  const float inv_count = 1.0f / static_cast<float>(p.spatial * p.group_size);
  for (int32_t o = 0; o < p.outer; ++o) {
    const float* in = input + o * p.spatial * channels;
    float* out = output + o * p.spatial * channels;
    for (int32_t first = 0; first < channels; first += p.group_size) {
      float mean = 0.0f;
      for (int32_t s = 0; s < p.spatial; ++s)
        for (int32_t j = 0; j < p.group_size; ++j) mean += in[s * channels + first + j];
      mean *= inv_count;
      float var = 0.0f;
      for (int32_t s = 0; s < p.spatial; ++s)
        for (int32_t j = 0; j < p.group_size; ++j) {
          const float d = in[s * channels + first + j] - mean;
          var += d * d;
        }
      const float inv_std = 1.0f / std::sqrt(var * inv_count + p.eps);
      for (int32_t s = 0; s < p.spatial; ++s)
        for (int32_t j = 0; j < p.group_size; ++j) {
          const int32_t c = first + j, i = s * channels + c;
          out[i] = (in[i] - mean) * inv_std * weight[c] + bias[c];
        }
    }
  }
}

}  // namespace mcuflow::kernels::detail
