// Element-wise add, int16 (symmetric inputs and output): both inputs moved to a common scale
// with 15 bits of headroom, summed in int32, then rescaled to the output.
#include "binary_common.h"
#include "mcuflow/kernels/kernels.h"

namespace mcuflow::kernels {

void add_s16(const BinaryParams& p, const int16_t* input1, const int16_t* input2, int16_t* output) {
  detail::binary_elementwise(p, input1, input2, output,
                             [&p](int16_t a, int16_t b) { return detail::add_or_sub(p, a, b, false); });
}

}  // namespace mcuflow::kernels
