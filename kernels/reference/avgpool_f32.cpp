// Average pooling, float32: mean over the valid (non-padding) part of the window.
#include "mcuflow/kernels/kernels.h"
#include "pool_common.h"

namespace mcuflow::kernels {

void avgpool_f32(const PoolParams& p, const float* input, float* output) {
  detail::pool_windows(
      p, input, output, 0.0f, [](float sum, float v) { return sum + v; },
      [&p](float sum, int32_t count) {
        float avg = sum / static_cast<float>(count);
        avg = avg < p.act_min_f ? p.act_min_f : avg;
        return avg > p.act_max_f ? p.act_max_f : avg;
      });
}

}  // namespace mcuflow::kernels
