// Average pooling, int8, DSP extension: window sums of sixteen channels at a time (then eight,
// four) in 16-bit halves (channel_sums.h), then the reference's division (SDIV, rounding half
// away from zero) per channel.
#include "channel_sums.h"

namespace mcuflow::kernels {

void avgpool_s8_dsp(const PoolParams& params, const int8_t* input, int8_t* output) {
  const PoolParams p = params;  // a copy: the output stores could alias the fields otherwise
  for_each_pool_pixel(p, input, output, [&](const PoolWindow& window, int8_t* out) {
    const auto average = [&](int32_t sum) { return pool_average(sum, window.count, p.act_min, p.act_max); };
    dsp::sum_channels(window, p.c, average, out);
  });
}

}  // namespace mcuflow::kernels
