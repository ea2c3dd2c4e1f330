// int8 -> int8 requantization, Armv6-M (kernels_scalar.h): one table lookup per element, the
// table holding the reference's output for each of the 256 inputs (so exact by construction).
#include "mcuflow/kernels/kernels_scalar.h"

namespace mcuflow::kernels {

void requantize_s8_scalar(const RequantizeParams& p, const int8_t* input, const int8_t* table, int8_t* output) {
  const auto* in = reinterpret_cast<const uint8_t*>(input);
  int8_t* const end = output + p.n;
  for (int8_t* const fours_end = output + (p.n & ~3); output != fours_end; output += 4, in += 4) {
    // four loads before the first store: in place (output == input) stays correct
    const uint8_t b0 = in[0], b1 = in[1], b2 = in[2], b3 = in[3];
    output[0] = table[b0];
    output[1] = table[b1];
    output[2] = table[b2];
    output[3] = table[b3];
  }
  while (output != end) *output++ = table[*in++];
}

}  // namespace mcuflow::kernels
