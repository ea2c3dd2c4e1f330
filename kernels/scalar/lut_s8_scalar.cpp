// Table-lookup activation (sigmoid, tanh, hardswish, ...), int8, Armv6-M (kernels_scalar.h): the
// reference's own table, indexed from its middle by the signed input byte.
#include "byte_lookup.h"
#include "mcuflow/kernels/kernels_scalar.h"

namespace mcuflow::kernels {

void lut_s8_scalar(const LutParams& p, const int8_t* input, const int8_t* table, int8_t* output) {
  scalar::lookup_bytes<int8_t>(p.n, input, table, output);
}

}  // namespace mcuflow::kernels
