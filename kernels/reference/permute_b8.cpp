// Permutation (up to kMaxRank dims) of 1-byte elements.
#include "mcuflow/kernels/kernels.h"
#include "permute_common.h"

namespace mcuflow::kernels {

void permute_b8(const PermuteParams& p, const int8_t* input, int8_t* output) {
  detail::permute(p, input, output);
}

}  // namespace mcuflow::kernels
