// Average pooling, int8, DSP extension: window sums of sixteen channels at a time in 16-bit
// halves (channel_sums.h), then the reference's division (SDIV, rounding half away from zero)
// per channel.
#include "channel_sums.h"

namespace mcuflow::kernels {

void avgpool_s8_dsp(const PoolParams& params, const int8_t* input, int8_t* output) {
  const PoolParams p = params;  // a copy: the output stores could alias the fields otherwise
  for_each_pool_pixel(p, input, output, [&](const PoolWindow& window, int8_t* out) {
    dsp::for_each_channel_pass(window, p.c, [&](int32_t c, int32_t n, const int32_t* totals) {
      for (int32_t j = 0; j < n; ++j) out[c + j] = pool_average(totals[j], window.count, p.act_min, p.act_max);
    });
  });
}

}  // namespace mcuflow::kernels
