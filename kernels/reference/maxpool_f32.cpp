// Max pooling, float32. The window is clipped to the input (padding never wins).
#include "mcuflow/kernels/kernels.h"
#include "pool_common.h"

namespace mcuflow::kernels {

void maxpool_f32(const PoolParams& p, const float* input, float* output) {
  detail::pool_windows(
      p, input, output, -3.402823466e+38f /* lowest float */, [](float m, float v) { return v > m ? v : m; },
      [&p](float m, int32_t) {
        m = m < p.act_min_f ? p.act_min_f : m;
        return m > p.act_max_f ? p.act_max_f : m;
      });
}

}  // namespace mcuflow::kernels
