// Strided gather (up to kMaxRank dims) with a constant fill (pad, slice, broadcast, upsample), 4-byte elements.
#include "mcuflow/kernels/kernels.h"
#include "strided_copy_common.h"

namespace mcuflow::kernels {

void strided_copy_b32(const StridedCopyParams& p, const int32_t* input, int32_t* output) {
  detail::strided_copy(p, input, output, p.fill);
}

}  // namespace mcuflow::kernels
