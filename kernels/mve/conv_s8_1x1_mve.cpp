// Pointwise (1x1) convolution, int8, MVE: a GEMM of output pixels against the reference
// weights, two pixels (interleaved in the scratch) by four output channels per step
// (kernels_mve.h). Like the reference it walks the pixels backwards when the output starts above
// the input (raster_order.h); a pair's two input pixels are read before either output is written,
// so it may run in place wherever the reference may.
#include "mve_blocks.h"

namespace mcuflow::kernels {

void conv_s8_1x1_mve(const ConvParams& p, const int8_t* input, const int8_t* weights, const uint8_t* prepared,
                     int8_t* scratch, int8_t* output) {
  mve::GemmArgs g{p.in_c, p.out_c, weights, prepared, p.out.output_offset, p.out.act_min, p.out.act_max};
  if (p.out_h * p.out_w > 1) g.left_shifts = mve::gemm_left_shifts(g);  // scanned only where rows pair up
  const int32_t pixels = p.out_h * p.out_w;
  if (reinterpret_cast<uintptr_t>(output) > reinterpret_cast<uintptr_t>(input)) {
    // Output pixel q reads input pixel (q / out_w * stride_h, q % out_w * stride_w).
    auto input_of = [&](int32_t q) {
      return input + ((q / p.out_w) * p.stride_h * p.in_w + (q % p.out_w) * p.stride_w) * p.in_c;
    };
    int32_t q = pixels;
    for (; q >= 2; q -= 2) {
      mve::interleave_rows(scratch, input_of(q - 2), input_of(q - 1), p.in_c);
      mve::gemm_two_rows(g, scratch, output + (q - 2) * p.out_c, output + (q - 1) * p.out_c);
    }
    if (q == 1) mve::gemm_one_row(g, input, output);
    return;
  }
  // Forwards; pairs may span rows.
  int32_t oy = 0, ox = 0;
  auto next_input = [&]() {
    const int8_t* at = input + (oy * p.stride_h * p.in_w + ox * p.stride_w) * p.in_c;
    if (++ox == p.out_w) ox = 0, ++oy;
    return at;
  };
  int32_t i = 0;
  for (; i + 1 < pixels; i += 2, output += 2 * p.out_c) {
    const int8_t* in0 = next_input();
    mve::interleave_rows(scratch, in0, next_input(), p.in_c);
    mve::gemm_two_rows(g, scratch, output, output + p.out_c);
  }
  if (i < pixels) mve::gemm_one_row(g, next_input(), output);
}

}  // namespace mcuflow::kernels
