// Permutation (up to kMaxRank dims) of 4-byte elements (float32 tensors travel as int32 bit patterns).
#include "mcuflow/kernels/kernels.h"
#include "permute_common.h"

namespace mcuflow::kernels {

void permute_b32(const PermuteParams& p, const int32_t* input, int32_t* output) {
  detail::permute(p, input, output);
}

}  // namespace mcuflow::kernels
