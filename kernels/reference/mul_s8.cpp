// Element-wise multiply, int8 (TFLite int8 mul): the product of the offset inputs is
// requantized once with in1_scale*in2_scale/out_scale.
#include "mcuflow/kernels/arith.h"
#include "mcuflow/kernels/kernels.h"

namespace mcuflow::kernels {

void mul_s8(const BinaryParams& p, const int8_t* input1, const int8_t* input2, int8_t* output) {
  for (int32_t o = 0; o < p.outer; ++o) {
    for (int32_t i = 0; i < p.inner; ++i) {
      const int32_t n = o * p.inner + i;
      const int32_t n2 = p.in2_mode == 0 ? n : (p.in2_mode == 1 ? i : 0);
      const int32_t prod = (input1[n] + p.input1_offset) * (input2[n2] + p.input2_offset);
      const int32_t out =
          multiply_by_quantized_multiplier(prod, p.output_multiplier, p.output_shift) + p.output_offset;
      output[n] = static_cast<int8_t>(clamp_i32(out, p.act_min, p.act_max));
    }
  }
}

}  // namespace mcuflow::kernels
