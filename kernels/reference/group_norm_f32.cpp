// Group normalization, float32 (GroupNormParams; layer_norm, GroupNorm and InstanceNorm).
#include "mcuflow/kernels/kernels.h"
#include "norm_common.h"

namespace mcuflow::kernels {

void group_norm_f32(const GroupNormParams& p, const float* input, const float* weight, const float* bias,
                    float* output) {
  detail::group_norm_f32(p, input, weight, bias, output);
}

}  // namespace mcuflow::kernels
