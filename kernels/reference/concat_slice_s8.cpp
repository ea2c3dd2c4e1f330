// One input of a channel concatenation, int8: copies (or requantizes, when the input's
// quantization differs from the output's) `in_c` channels into their slice of the output.
#include <cstring>

#include "mcuflow/kernels/arith.h"
#include "mcuflow/kernels/kernels.h"

namespace mcuflow::kernels {

void concat_slice_s8(const ConcatSliceParams& p, const int8_t* input, int8_t* output) {
  for (int32_t o = 0; o < p.outer; ++o) {
    const int8_t* in = input + o * p.in_c;
    int8_t* out = output + o * p.out_c + p.offset_c;
    if (!p.requantize) {
      std::memmove(out, in, static_cast<size_t>(p.in_c));
      continue;
    }
    for (int32_t c = 0; c < p.in_c; ++c) {
      const int32_t v =
          multiply_by_quantized_multiplier(in[c] + p.input_offset, p.multiplier, p.shift) + p.output_offset;
      out[c] = static_cast<int8_t>(clamp_i32(v, -128, 127));
    }
  }
}

}  // namespace mcuflow::kernels
