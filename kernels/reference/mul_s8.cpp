// Element-wise multiply, int8 (TFLite int8 mul): the product of the offset inputs is
// requantized once with in1_scale*in2_scale/out_scale.
#include "binary_common.h"
#include "mcuflow/kernels/kernels.h"

namespace mcuflow::kernels {

void mul_s8(const BinaryParams& p, const int8_t* input1, const int8_t* input2, int8_t* output) {
  detail::binary_elementwise(p, input1, input2, output, [&p](int8_t a, int8_t b) { return detail::multiply(p, a, b); });
}

}  // namespace mcuflow::kernels
