// Average pooling, int8. The sum over the window clipped to the input is divided by the
// number of valid (non-padding) elements, rounding half away from zero.
#include "mcuflow/kernels/arith.h"
#include "mcuflow/kernels/kernels.h"
#include "pool_common.h"

namespace mcuflow::kernels {

void avgpool_s8(const PoolParams& p, const int8_t* input, int8_t* output) {
  detail::pool_windows(
      p, input, output, int32_t(0), [](int32_t sum, int8_t v) { return sum + v; },
      [&p](int32_t sum, int32_t count) {
        // C++ division truncates; biasing by half the divisor towards the sign of the sum
        // turns it into round-half-away-from-zero. (The verifier rules out empty windows.)
        const int32_t avg = sum > 0 ? (sum + count / 2) / count : (sum - count / 2) / count;
        return static_cast<int8_t>(clamp_i32(avg, p.act_min, p.act_max));
      });
}

}  // namespace mcuflow::kernels
