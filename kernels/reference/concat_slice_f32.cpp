// One input of a channel concatenation, float32: copies `in_c` channels into their slice.
#include <cstring>

#include "mcuflow/kernels/kernels.h"

namespace mcuflow::kernels {

void concat_slice_f32(const ConcatSliceParams& p, const float* input, float* output) {
  for (int32_t o = 0; o < p.outer; ++o) {
    std::memmove(output + o * p.out_c + p.offset_c, input + o * p.in_c,
                static_cast<size_t>(p.in_c) * sizeof(float));
  }
}

}  // namespace mcuflow::kernels
