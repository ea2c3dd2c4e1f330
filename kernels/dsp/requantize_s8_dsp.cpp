// Requantize, int8, DSP: the output is a function of the input byte alone, so the compiler
// tabulates it (requantize_table_entry) and the kernel looks each byte of an input word up.
#include "dsp_blocks.h"

namespace mcuflow::kernels {

void requantize_s8_dsp(const RequantizeParams& p, const int8_t* input, const int8_t* table, int8_t* output) {
  dsp::lookup_bytes<0>(p.n, input, table, output);
}

}  // namespace mcuflow::kernels
