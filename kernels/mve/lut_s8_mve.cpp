// Table-lookup activation (sigmoid, tanh, hardswish, ...), int8, MVE: the reference's own table,
// gathered sixteen lanes per step with the input bytes flipped into unsigned offsets
// (b ^ 0x80 = b + 128).
#include "mve_blocks.h"

namespace mcuflow::kernels {

void lut_s8_mve(const LutParams& p, const int8_t* input, const int8_t* table, int8_t* output) {
  mve::lookup_bytes<0x80>(p.n, input, table, output);
}

}  // namespace mcuflow::kernels
