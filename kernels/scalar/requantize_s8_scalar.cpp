// int8 -> int8 requantization, Armv6-M (kernels_scalar.h): one table lookup per element, the
// table holding the reference's output for each of the 256 inputs (so exact by construction).
#include "byte_lookup.h"
#include "mcuflow/kernels/kernels_scalar.h"

namespace mcuflow::kernels {

void requantize_s8_scalar(const RequantizeParams& p, const int8_t* input, const int8_t* table, int8_t* output) {
  scalar::lookup_bytes<uint8_t>(p.n, input, table, output);
}

}  // namespace mcuflow::kernels
