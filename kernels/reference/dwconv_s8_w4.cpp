// Depthwise convolution, int8 activations and packed int4 per-channel weights [k_h][k_w][out_c]
// (w4_common.h): dwconv_s8's integers on the weights unpacked. Output channel oc = ic * ch_mult + m
// reads input channel ic.
#include "mcuflow/kernels/kernels.h"
#include "w4_common.h"
#include "window.h"

namespace mcuflow::kernels {

void dwconv_s8_w4(const DwConvParams& p, const int8_t* input, const uint8_t* weights, const int32_t* bias,
                  const int32_t* multipliers, const int32_t* shifts, int8_t* output) {
  const auto tap = [=](int32_t pixel, int32_t ky, int32_t kx, int32_t oc) {
    return (input[pixel * p.in_c + oc / p.ch_mult] + p.input_offset) *
           detail::weight_s4(weights, (ky * p.k_w + kx) * p.out_c + oc);
  };
  detail::weighted_window<int32_t>(p, input, output, tap, [=](int32_t acc, int32_t oc) {
    return detail::output_stage_s8(acc, bias, oc, multipliers[oc], shifts[oc], p.out);
  });
}

}  // namespace mcuflow::kernels
