// Element-wise multiply, int8, Armv6-M (kernels_scalar.h): the product of the offset inputs
// (|x + offset| <= 255, so the product fits int32 like the reference's) requantized from
// 16x16-bit products (scalar_requantize, equal to the reference's 64-bit one for every int32)
// instead of a 64-bit library multiply.
#include "scalar_gemm.h"

namespace mcuflow::kernels {

void mul_s8_scalar(const BinaryParams& p, const int8_t* input1, const int8_t* input2, int8_t* output) {
  const scalar::TensorRequant r(p.output_multiplier, p.output_shift, p.output_offset, p.act_min, p.act_max);
  const int32_t offset1 = p.input1_offset, offset2 = p.input2_offset;
  binary_runs(p, input1, input2, output, [&](const int8_t* a, const int8_t* b, int32_t b_step, int8_t* out, int32_t n) {
    for (int8_t* const end = out + n; out != end; ++out, b += b_step) {
      *out = scalar::requantize((*a++ + offset1) * (*b + offset2), r);
    }
  });
}

}  // namespace mcuflow::kernels
