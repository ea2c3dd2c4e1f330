// 1x1 conv, int8, Armv6-M (kernels_scalar.h): each output pixel is its input pixel's channels,
// widened once, times every group of four output channels. Pixels in the reference's order (raster_order.h),
// so it may run in place wherever the reference may.
#include "../reference/raster_order.h"
#include "scalar_gemm.h"

namespace mcuflow::kernels {

void conv_s8_1x1_scalar(const ConvParams& p, const int8_t* input, const int32_t* prepared, int32_t* row,
                        int8_t* output) {
  const scalar::Requant r{prepared, p.out.output_offset, p.out.act_min, p.out.act_max};
  detail::for_each_output_pixel(p.out_h, p.out_w, input, output, [&](int32_t oy, int32_t ox) {
    scalar::widen_row(input + (oy * p.stride_h * p.in_w + ox * p.stride_w) * p.in_c, p.in_c, row);
    scalar::gemm_row(row, p.in_c, p.out_c, prepared, r, output + (oy * p.out_w + ox) * p.out_c);
  });
}

}  // namespace mcuflow::kernels
