// Comparisons of float32 tensors into int8 masks, input2 broadcast by in2_mode.
#include "binary_common.h"
#include "mcuflow/kernels/kernels.h"

namespace mcuflow::kernels {

void compare_f32(const CompareParams& p, const float* input1, const float* input2, int8_t* mask) {
  detail::binary_elementwise(p, input1, input2, mask,
                             [&p](float a, float b) { return static_cast<int8_t>(detail::compare(p.op, a, b)); });
}

}  // namespace mcuflow::kernels
