// Max pooling, int16: the window clipped to the input (padding never wins), then the clamp.
#include "mcuflow/kernels/kernels.h"
#include "pool_common.h"
#include "s16_common.h"

namespace mcuflow::kernels {

void maxpool_s16(const PoolParams& p, const int16_t* input, int16_t* output) {
  detail::pool_windows(
      p, input, output, int32_t(-32768), [](int32_t m, int16_t v) { return v > m ? int32_t(v) : m; },
      [&p](int32_t m, int32_t) { return detail::clamp_to_s16(m, p.act_min, p.act_max); });
}

}  // namespace mcuflow::kernels
