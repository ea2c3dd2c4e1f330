// Element-wise table lookup, int16: any unary function of one quantized tensor as 513 values the
// compiler computed, interpolated between neighbours (lut_s16.h). Reads each element before
// writing it, so in place is fine.
#include "mcuflow/kernels/kernels.h"
#include "mcuflow/kernels/lut_s16.h"

namespace mcuflow::kernels {

void lut_s16(const LutParams& p, const int16_t* input, const int16_t* table, int16_t* output) {
  for (int32_t i = 0; i < p.n; ++i) output[i] = lut_s16_at(table, uint32_t(input[i] + kLutS16InputOffset));
}

}  // namespace mcuflow::kernels
