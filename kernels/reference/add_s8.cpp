// Element-wise add, int8 (TFLite int8 add): both inputs are moved to a common scale with
// left_shift bits of headroom, summed in int32, then rescaled to the output.
#include "binary_common.h"
#include "mcuflow/kernels/kernels.h"

namespace mcuflow::kernels {

void add_s8(const BinaryParams& p, const int8_t* input1, const int8_t* input2, int8_t* output) {
  detail::binary_elementwise(p, input1, input2, output,
                             [&p](int8_t a, int8_t b) { return detail::add_or_sub(p, a, b, false); });
}

}  // namespace mcuflow::kernels
