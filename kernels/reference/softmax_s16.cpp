// Softmax over the last axis, int16 in (symmetric), int16 out with scale 1/32768 and zero point
// 0, in softmax_s16.h's steps.
#include "mcuflow/kernels/kernels.h"
#include "mcuflow/kernels/softmax_s16.h"

namespace mcuflow::kernels {

void softmax_s16(const SoftmaxS16Params& p, const int16_t* input, const int16_t* exp_table, int16_t* output) {
  softmax_s16_rows(p, input, output, [exp_table](uint32_t z) { return lut_s16_at(exp_table, z); });
}

}  // namespace mcuflow::kernels
