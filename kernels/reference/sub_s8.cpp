// Element-wise subtract, int8: add_s8's arithmetic with the rescaled second input subtracted.
#include "binary_common.h"
#include "mcuflow/kernels/kernels.h"

namespace mcuflow::kernels {

void sub_s8(const BinaryParams& p, const int8_t* input1, const int8_t* input2, int8_t* output) {
  detail::binary_elementwise(p, input1, input2, output,
                             [&p](int8_t a, int8_t b) { return detail::add_or_sub(p, a, b, true); });
}

}  // namespace mcuflow::kernels
