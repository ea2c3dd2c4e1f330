// Requantize, int8, DSP: the output is a function of the input byte alone, so the compiler
// tabulates it (requantize_table_entry) and the kernel looks each byte of an input word up.
// Each word is read before it is written, so it runs in place.
#include <cstring>

#include "mcuflow/kernels/kernels_dsp.h"

namespace mcuflow::kernels {

void requantize_s8_dsp(const RequantizeParams& p, const int8_t* input, const int8_t* table, int8_t* output) {
  const uint8_t* entries = reinterpret_cast<const uint8_t*>(table);
  int32_t i = 0;
  for (; i + 4 <= p.n; i += 4) {
    uint32_t x;
    std::memcpy(&x, input + i, sizeof(x));
    const uint32_t y = entries[x & 0xFFu] | uint32_t(entries[(x >> 8) & 0xFFu]) << 8 |
                       uint32_t(entries[(x >> 16) & 0xFFu]) << 16 | uint32_t(entries[x >> 24]) << 24;
    std::memcpy(output + i, &y, sizeof(y));
  }
  for (; i < p.n; ++i) output[i] = int8_t(entries[uint8_t(input[i])]);
}

}  // namespace mcuflow::kernels
