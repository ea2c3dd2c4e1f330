// torch.where, float32.
#include "mcuflow/kernels/kernels.h"

namespace mcuflow::kernels {

void where_f32(const WhereParams& p, const int8_t* mask, const float* a, const float* b, float* output) {
  for (int32_t i = 0; i < p.count; ++i)
    output[i] = mask[p.mask_single ? 0 : i] != 0 ? a[p.a_single ? 0 : i] : b[p.b_single ? 0 : i];
}

}  // namespace mcuflow::kernels
