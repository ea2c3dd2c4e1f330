// Clamp, int8, DSP: four bytes per word, SSUB8 setting the GE flags per byte and SEL picking the
// larger (then the smaller) byte. Each word is read before it is written, so it runs in place.
#include <cstring>

#include "mcuflow/kernels/kernels_dsp.h"

namespace mcuflow::kernels {

void clamp_s8_dsp(const ClampParams& p, const int8_t* input, int8_t* output) {
  int32_t i = 0;
#if defined(__ARM_FEATURE_DSP)
  const uint32_t act_min = (uint32_t(p.act_min) & 0xFFu) * 0x01010101u, act_max = (uint32_t(p.act_max) & 0xFFu) * 0x01010101u;
  for (; i + 4 <= p.n; i += 4) {
    uint32_t x = uint32_t(dsp::read_word(input + i)), scratch;
    // One asm: the GE flags SSUB8 sets must reach SEL unchanged.
    __asm__("ssub8 %[t], %[x], %[lo]\n\t"
            "sel %[x], %[x], %[lo]\n\t"
            "ssub8 %[t], %[x], %[hi]\n\t"
            "sel %[x], %[hi], %[x]"
            : [x] "+r"(x), [t] "=&r"(scratch)
            : [lo] "r"(act_min), [hi] "r"(act_max));
    std::memcpy(output + i, &x, sizeof(x));
  }
#endif
  for (; i < p.n; ++i) output[i] = int8_t(clamp_i32(input[i], p.act_min, p.act_max));
}

}  // namespace mcuflow::kernels
