// int8 -> float32 at a program's output, Armv7E-M: dequantize_s8_f32_scalar's table lookup
// (kernels_scalar.h), the input read a word (four bytes, any alignment) at a time, before its
// four outputs are written. In place (the output below the input, both ending together: input
// byte j at output byte 3n + j), output words 4k..4k+3 reach input byte 16k + 15 - 3n <= 4k + 3
// whenever 4k + 4 <= n: only bytes already read.
#include <cstring>

#include "mcuflow/kernels/kernels_dsp.h"

namespace mcuflow::kernels {

void dequantize_s8_f32_dsp(const QuantizeParams& p, const int8_t* input, const uint32_t* table, float* output) {
  auto* out = reinterpret_cast<uint32_t*>(output);
  const int32_t n = p.n;
  int32_t i = 0;
  for (; i + 4 <= n; i += 4) {
    uint32_t bytes;
    std::memcpy(&bytes, input + i, sizeof bytes);
    out[i] = table[bytes & 0xff];
    out[i + 1] = table[(bytes >> 8) & 0xff];
    out[i + 2] = table[(bytes >> 16) & 0xff];
    out[i + 3] = table[bytes >> 24];
  }
  for (; i < n; ++i) out[i] = table[uint8_t(input[i])];
}

}  // namespace mcuflow::kernels
