// Element-wise table lookup, int8: any unary function of one quantized tensor, computed by
// the compiler for all 256 inputs. Reads each element before writing it, so in place is fine.
#include "mcuflow/kernels/kernels.h"

namespace mcuflow::kernels {

void lut_s8(const LutParams& p, const int8_t* input, const int8_t* table, int8_t* output) {
  for (int32_t i = 0; i < p.n; ++i) output[i] = table[input[i] + 128];
}

}  // namespace mcuflow::kernels
