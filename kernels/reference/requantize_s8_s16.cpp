// int8 -> int16 (a layer boundary where the precision changes); in place is not (wider output).
#include "convert_common.h"
#include "mcuflow/kernels/kernels.h"

namespace mcuflow::kernels {

void requantize_s8_s16(const RequantizeParams& p, const int8_t* input, int16_t* output) {
  detail::requantize(p, input, output);
}

}  // namespace mcuflow::kernels
