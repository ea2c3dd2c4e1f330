// Element-wise maximum, int8: both inputs requantized to the output's scale, then compared.
#include "binary_common.h"
#include "mcuflow/kernels/kernels.h"

namespace mcuflow::kernels {

void maximum_s8(const BinaryParams& p, const int8_t* input1, const int8_t* input2, int8_t* output) {
  detail::binary_elementwise(p, input1, input2, output,
                             [&p](int8_t a, int8_t b) { return detail::min_or_max_s8<true>(p, a, b); });
}

}  // namespace mcuflow::kernels
