// Average pooling, int8. The sum over the window clipped to the input is divided by the
// number of valid (non-padding) elements, rounding half away from zero.
#include "mcuflow/kernels/arith.h"
#include "mcuflow/kernels/kernels.h"
#include "pool_common.h"

namespace mcuflow::kernels {

void avgpool_s8(const PoolParams& p, const int8_t* input, int8_t* output) {
  detail::pool_windows(
      p, input, output, int32_t(0), [](int32_t sum, int8_t v) { return sum + v; },
      [&p](int32_t sum, int32_t count) {  // the verifier rules out empty windows
        return static_cast<int8_t>(clamp_i32(detail::rounded_average(sum, count), p.act_min, p.act_max));
      });
}

}  // namespace mcuflow::kernels
