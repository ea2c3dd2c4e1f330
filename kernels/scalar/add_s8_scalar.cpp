// Element-wise add, int8, Armv6-M (kernels_scalar.h). The reference rescales each input with a
// 64-bit product (a library call on Armv6-M); here each input's rescaled value is one word of
// the prepared tables (the reference's own value for that byte), their sum wraps like the
// reference's int32 sum, and only the output's requantization is computed, from 16x16-bit
// products (scalar_requantize, equal to the reference's for every int32): exact for every
// parameter the reference accepts.
#include "scalar_gemm.h"

namespace mcuflow::kernels {

void add_s8_scalar(const BinaryParams& p, const int8_t* input1, const int8_t* input2, const int32_t* tables,
                   int8_t* output) {
  const scalar::TensorRequant r(p.output_multiplier, p.output_shift, p.output_offset, p.act_min, p.act_max);
  const int32_t* const rescaled1 = tables;
  const int32_t* const rescaled2 = tables + kByteValues;
  binary_runs(p, input1, input2, output, [&](const int8_t* a, const int8_t* b, int32_t b_step, int8_t* out, int32_t n) {
    const auto* a_bytes = reinterpret_cast<const uint8_t*>(a);
    const auto* b_bytes = reinterpret_cast<const uint8_t*>(b);
    for (int8_t* const end = out + n; out != end; ++out, b_bytes += b_step) {
      const uint32_t combined = uint32_t(rescaled1[*a_bytes++]) + uint32_t(rescaled2[*b_bytes]);
      *out = scalar::requantize(int32_t(combined), r);
    }
  });
}

}  // namespace mcuflow::kernels
