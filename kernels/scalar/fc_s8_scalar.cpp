// Fully connected, int8, Armv6-M (kernels_scalar.h): each input row times every group of four
// output channels, like a 1x1 conv's input pixel.
#include "scalar_gemm.h"

namespace mcuflow::kernels {

void fc_s8_scalar(const FcParams& p, const int8_t* input, const int32_t* prepared, int8_t* output) {
  const scalar::Requant r{prepared, p.out.output_offset, p.out.act_min, p.out.act_max};
  for (int32_t row = 0; row < p.rows; ++row)
    scalar::gemm_row(input + row * p.in_c, p.in_c, p.out_c, prepared, r, output + row * p.out_c);
}

}  // namespace mcuflow::kernels
