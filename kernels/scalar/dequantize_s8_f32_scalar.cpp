// int8 -> float32 at a program's output, Thumb-1: each output is the prepared table's entry for
// its input byte (the reference's product, computed by the compiler and checked at load), one
// word load and store per element instead of a soft-float conversion and multiply. Input byte
// i is read before output word i is written, as the planner's widening in-place ops need.
#include "mcuflow/kernels/kernels_scalar.h"

#include <cstring>

namespace mcuflow::kernels {

void dequantize_s8_f32_scalar(const QuantizeParams& p, const int8_t* input, const uint32_t* table, float* output) {
  auto* out = reinterpret_cast<uint32_t*>(output);
  for (int32_t i = 0; i < p.n; ++i) out[i] = table[uint8_t(input[i])];
}

}  // namespace mcuflow::kernels
