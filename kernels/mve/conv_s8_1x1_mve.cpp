// Pointwise (1x1) convolution, int8, MVE: a GEMM of output pixels against packed weights,
// two pixels by four output channels per step (kernels_mve.h describes the prepared input).
#include "mcuflow/kernels/kernels_mve.h"

namespace mcuflow::kernels {

void conv_s8_1x1_mve(const ConvParams& p, const int8_t* input, const uint8_t* prepared, int8_t* output) {
  const mve::GemmArgs g{p.in_c, p.out_c, prepared, p.output_offset, p.act_min, p.act_max};
  // Output pixel i reads input pixel (oy * stride_h, ox * stride_w); pairs may span output rows.
  const int32_t pixels = p.out_h * p.out_w;
  auto pixel_input = [&](int32_t i) {
    const int32_t oy = i / p.out_w, ox = i - oy * p.out_w;
    return input + (oy * p.stride_h * p.in_w + ox * p.stride_w) * p.in_c;
  };
  int32_t i = 0;
  for (; i + 1 < pixels; i += 2) {
    mve::gemm_two_rows(g, pixel_input(i), pixel_input(i + 1), output + i * p.out_c, output + (i + 1) * p.out_c);
  }
  if (i < pixels) mve::gemm_two_rows(g, pixel_input(i), pixel_input(i), output + i * p.out_c, nullptr);
}

}  // namespace mcuflow::kernels
