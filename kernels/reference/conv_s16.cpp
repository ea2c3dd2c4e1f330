// 2-D convolution, int16 activations and int8 per-channel weights (OHWI), int64 bias and
// accumulator; padding taps contribute nothing (the input zero point is 0). Grouped: output
// channel oc reads the in_c / groups input channels of its group, oc / (out_c / groups).
#include "mcuflow/kernels/kernels.h"
#include "s16_common.h"

namespace mcuflow::kernels {

void conv_s16(const ConvParams& p, const int16_t* input, const int8_t* weights, const int64_t* bias,
              const int32_t* multipliers, const int32_t* shifts, int16_t* output) {
  const int32_t group_in = p.in_c / p.groups, group_out = p.out_c / p.groups;
  const auto tap = [&](int32_t pixel, int32_t ky, int32_t kx, int32_t oc) {
    return detail::dot_s16_s8_wide(input + pixel * p.in_c + oc / group_out * group_in,
                                   weights + ((oc * p.k_h + ky) * p.k_w + kx) * group_in, group_in);
  };
  detail::weighted_window_s16(p, input, bias, multipliers, shifts, output, tap);
}

}  // namespace mcuflow::kernels
