// Average pooling, int16: the window clipped to the input summed in int64, divided by the
// number of valid elements, rounding half away from zero.
#include "mcuflow/kernels/kernels.h"
#include "pool_common.h"
#include "s16_common.h"

namespace mcuflow::kernels {

void avgpool_s16(const PoolParams& p, const int16_t* input, int16_t* output) {
  detail::pool_windows(
      p, input, output, int64_t(0), [](int64_t sum, int16_t v) { return sum + v; },
      [&p](int64_t sum, int32_t count) { return detail::clamp_to_s16(detail::rounded_average(sum, count), p.act_min, p.act_max); });
}

}  // namespace mcuflow::kernels
