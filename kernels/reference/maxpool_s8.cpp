// Max pooling, int8. The window is clipped to the input (padding never wins); input and
// output share quantization, so only the activation clamp is applied.
#include "mcuflow/kernels/arith.h"
#include "mcuflow/kernels/kernels.h"
#include "pool_common.h"

namespace mcuflow::kernels {

void maxpool_s8(const PoolParams& p, const int8_t* input, int8_t* output) {
  detail::pool_windows(
      p, input, output, int32_t(-128), [](int32_t m, int8_t v) { return v > m ? int32_t(v) : m; },
      [&p](int32_t m, int32_t) { return static_cast<int8_t>(clamp_i32(m, p.act_min, p.act_max)); });
}

}  // namespace mcuflow::kernels
