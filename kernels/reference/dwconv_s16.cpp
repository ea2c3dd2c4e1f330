// Depthwise convolution, int16 activations and int8 per-channel weights [k_h][k_w][out_c],
// int64 bias and accumulator; output channel oc = ic * ch_mult + m reads input channel ic.
#include "mcuflow/kernels/kernels.h"
#include "s16_common.h"

namespace mcuflow::kernels {

void dwconv_s16(const DwConvParams& p, const int16_t* input, const int8_t* weights, const int64_t* bias,
                const int32_t* multipliers, const int32_t* shifts, int16_t* output) {
  const auto tap = [&](int32_t pixel, int32_t ky, int32_t kx, int32_t oc) {
    return int64_t(int32_t(input[pixel * p.in_c + oc / p.ch_mult]) * weights[(ky * p.k_w + kx) * p.out_c + oc]);
  };
  detail::weighted_window_s16(p, input, bias, multipliers, shifts, output, tap);
}

}  // namespace mcuflow::kernels
