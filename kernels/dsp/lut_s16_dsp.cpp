// Table-lookup activation, int16, DSP: the reference's 513-entry table, each input's two
// neighbouring entries read as one word and blended by one SMLAD (lut_s16.h).
#include "dsp_blocks.h"
#include "mcuflow/kernels/lut_s16.h"

namespace mcuflow::kernels {

void lut_s16_dsp(const LutParams& p, const int16_t* input, const int16_t* table, int16_t* output) {
  for (int32_t i = 0; i < p.n; ++i) output[i] = dsp::lut_s16_at(table, uint32_t(input[i] + kLutS16InputOffset));
}

}  // namespace mcuflow::kernels
