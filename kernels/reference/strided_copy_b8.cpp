// Strided gather (up to kMaxRank dims) with a constant fill (pad, slice, broadcast, upsample), 1-byte elements.
#include "mcuflow/kernels/kernels.h"
#include "strided_copy_common.h"

namespace mcuflow::kernels {

void strided_copy_b8(const StridedCopyParams& p, const int8_t* input, int8_t* output) {
  detail::strided_copy(p, input, output, static_cast<int8_t>(p.fill));
}

}  // namespace mcuflow::kernels
