// int8 -> int8 with another scale/zero point (TFLite int8 requantize); in place is fine.
#include "convert_common.h"
#include "mcuflow/kernels/kernels.h"

namespace mcuflow::kernels {

void requantize_s8(const RequantizeParams& p, const int8_t* input, int8_t* output) {
  detail::requantize(p, input, output);
}

}  // namespace mcuflow::kernels
