// Clamp, int8, DSP: four bytes per word, SSUB8 setting the GE flags per byte and SEL picking the
// larger (then the smaller) byte. Each word is read before it is written, so it runs in place.
#include "dsp_blocks.h"

namespace mcuflow::kernels {

void clamp_s8_dsp(const ClampParams& p, const int8_t* input, int8_t* output) {
  int32_t i = 0;
#if defined(__ARM_FEATURE_DSP)
  const uint32_t act_min = dsp::byte_splat(p.act_min), act_max = dsp::byte_splat(p.act_max);
  for (; i + 4 <= p.n; i += 4) dsp::write_word(output + i, dsp::clamp_bytes(uint32_t(dsp::read_word(input + i)), act_min, act_max));
#endif
  for (; i < p.n; ++i) output[i] = int8_t(clamp_i32(input[i], p.act_min, p.act_max));
}

}  // namespace mcuflow::kernels
