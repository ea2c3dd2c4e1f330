// Byte permutation, Thumb-1: permute_walk.h's rows, words only where both ends are aligned
// (Armv6-M faults on unaligned words).
#include "mcuflow/kernels/kernels_scalar.h"
#include "mcuflow/kernels/permute_walk.h"

namespace mcuflow::kernels {

void permute_b8_scalar(const PermuteParams& p, const int8_t* input, int8_t* output) {
  permute_rows_by_words<false>(p, input, output);
}

}  // namespace mcuflow::kernels
