// Softmax, int16, DSP: softmax_s16.h's rows with the exp table's two neighbouring entries read as
// one word and blended by one SMLAD.
#include "dsp_blocks.h"
#include "mcuflow/kernels/softmax_s16.h"

namespace mcuflow::kernels {

void softmax_s16_dsp(const SoftmaxS16Params& p, const int16_t* input, const int16_t* exp_table, int16_t* output) {
  softmax_s16_rows(p, input, output, [exp_table](uint32_t z) { return dsp::lut_s16_at(exp_table, z); });
}

}  // namespace mcuflow::kernels
