// Element-wise add, int8 (TFLite int8 add): both inputs are moved to a common scale with
// left_shift bits of headroom, summed in int32, then rescaled to the output.
#include "mcuflow/kernels/arith.h"
#include "mcuflow/kernels/kernels.h"

namespace mcuflow::kernels {

void add_s8(const BinaryParams& p, const int8_t* input1, const int8_t* input2, int8_t* output) {
  for (int32_t o = 0; o < p.outer; ++o) {
    for (int32_t i = 0; i < p.inner; ++i) {
      const int32_t n = o * p.inner + i;
      // in2_mode: 0 same shape, 1 per-inner broadcast, 2 scalar.
      const int32_t n2 = p.in2_mode == 0 ? n : (p.in2_mode == 1 ? i : 0);
      const int32_t a = wrapping_left_shift(input1[n] + p.input1_offset, p.left_shift);
      const int32_t b = wrapping_left_shift(input2[n2] + p.input2_offset, p.left_shift);
      const int32_t sum = multiply_by_quantized_multiplier(a, p.input1_multiplier, p.input1_shift) +
                          multiply_by_quantized_multiplier(b, p.input2_multiplier, p.input2_shift);
      const int32_t out =
          multiply_by_quantized_multiplier(sum, p.output_multiplier, p.output_shift) + p.output_offset;
      output[n] = static_cast<int8_t>(clamp_i32(out, p.act_min, p.act_max));
    }
  }
}

}  // namespace mcuflow::kernels
