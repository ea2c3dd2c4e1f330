// Index of the first maximum along one axis, float input, int32 output.
#include "argmax_common.h"
#include "mcuflow/kernels/kernels.h"

namespace mcuflow::kernels {

void argmax_f32(const ArgmaxParams& p, const float* input, int32_t* output) { detail::argmax(p, input, output); }

}  // namespace mcuflow::kernels
