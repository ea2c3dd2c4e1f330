// Element-wise multiply, int16 (symmetric inputs and output): the product requantized once.
#include "binary_common.h"
#include "mcuflow/kernels/kernels.h"

namespace mcuflow::kernels {

void mul_s16(const BinaryParams& p, const int16_t* input1, const int16_t* input2, int16_t* output) {
  detail::binary_elementwise(p, input1, input2, output, [&p](int16_t a, int16_t b) { return detail::multiply(p, a, b); });
}

}  // namespace mcuflow::kernels
