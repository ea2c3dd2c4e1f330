// 2-D convolution (general, 1x1, grouped), int8 activations and packed int4 per-channel weights
// OHWI [out_c][k_h][k_w][in_c / groups] (w4_common.h): conv_s8's integers on the weights unpacked.
#include "mcuflow/kernels/kernels.h"
#include "w4_common.h"
#include "window.h"

namespace mcuflow::kernels {

// The taps and the output stage capture the params and pointers by value: copies that the int8
// output stores cannot alias, which keeps them in registers.
void conv_s8_w4(const ConvParams& p, const int8_t* input, const uint8_t* weights, const int32_t* bias,
                const int32_t* multipliers, const int32_t* shifts, int8_t* output) {
  const int32_t group_in = p.in_c / p.groups, group_out = p.out_c / p.groups;
  const auto tap = [=](int32_t pixel, int32_t ky, int32_t kx, int32_t oc) {
    return detail::dot_s8_w4(input + pixel * p.in_c + oc / group_out * group_in, weights,
                             ((oc * p.k_h + ky) * p.k_w + kx) * group_in, group_in, p.input_offset);
  };
  detail::weighted_window<int32_t>(p, input, output, tap, [=](int32_t acc, int32_t oc) {
    return detail::output_stage_s8(acc, bias, oc, multipliers[oc], shifts[oc], p.out);
  });
}

}  // namespace mcuflow::kernels
