// Layer normalization over the last axis, float32: one group per row (programs compiled
// before group_norm_f32 existed; the compiler now emits group_norm_f32 for layer_norm).
#include "mcuflow/kernels/kernels.h"
#include "norm_common.h"

namespace mcuflow::kernels {

void layer_norm_f32(const LayerNormParams& p, const float* input, const float* weight, const float* bias,
                    float* output) {
  detail::group_norm_f32(GroupNormParams{p.rows, 1, 1, p.depth, p.eps, 0, 0, 0, 0, 0}, input, weight, bias, output);
}

}  // namespace mcuflow::kernels
