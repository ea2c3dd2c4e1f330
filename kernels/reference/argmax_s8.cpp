// Index of the first maximum along one axis, int8_t input, int32 output.
#include "argmax_common.h"
#include "mcuflow/kernels/kernels.h"

namespace mcuflow::kernels {

void argmax_s8(const ArgmaxParams& p, const int8_t* input, int32_t* output) { detail::argmax(p, input, output); }

}  // namespace mcuflow::kernels
