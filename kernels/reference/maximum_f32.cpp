// Element-wise maximum, float32, with input2 broadcast by in2_mode (see BinaryParams).
#include "binary_common.h"
#include "mcuflow/kernels/kernels.h"

namespace mcuflow::kernels {

void maximum_f32(const BinaryParams& p, const float* input1, const float* input2, float* output) {
  detail::binary_elementwise(p, input1, input2, output,
                             [&p](float a, float b) { return detail::clamp_f32(a > b ? a : b, p); });
}

}  // namespace mcuflow::kernels
