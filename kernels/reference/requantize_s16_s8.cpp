// int16 -> int8 (a layer boundary where the precision changes);
// |q| <= 2^15, so shift <= 15 keeps the left shift within int32.
#include "convert_common.h"
#include "mcuflow/kernels/kernels.h"

namespace mcuflow::kernels {

void requantize_s16_s8(const RequantizeParams& p, const int16_t* input, int8_t* output) {
  detail::requantize(p, input, output);
}

}  // namespace mcuflow::kernels
