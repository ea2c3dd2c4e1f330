// Table-lookup activation (sigmoid, tanh, hardswish, ...), int8, DSP: the reference's own table,
// each byte of an input word flipped into an unsigned index (b ^ 0x80 = b + 128).
#include "dsp_blocks.h"

namespace mcuflow::kernels {

void lut_s8_dsp(const LutParams& p, const int8_t* input, const int8_t* table, int8_t* output) {
  dsp::lookup_bytes<0x80>(p.n, input, table, output);
}

}  // namespace mcuflow::kernels
