// Byte permutation, Armv7E-M: permute_walk.h's rows, contiguous runs by unaligned words.
#include "mcuflow/kernels/kernels_dsp.h"
#include "mcuflow/kernels/permute_walk.h"

namespace mcuflow::kernels {

void permute_b8_dsp(const PermuteParams& p, const int8_t* input, int8_t* output) {
  permute_rows_by_words<true>(p, input, output);
}

}  // namespace mcuflow::kernels
