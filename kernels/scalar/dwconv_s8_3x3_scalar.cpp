// 3x3 depthwise conv, int8, Thumb (kernels_scalar.h): the shared walk (depthwise.h), per channel
// bias' plus nine products of LDRSB [tap, c] and the channel's int32 weights, written out.
#include "depthwise.h"

namespace mcuflow::kernels {

namespace {

// bias' (w[0]) plus the nine taps' input at channel c (tap + c: depthwise.h) times the channel's weights w[1..9]:
// five instructions per tap on Armv6-M, four with MLA; GCC reloads the weight pointer from a
// high register for each.
#define MCUFLOW_SCALAR_DW_TAP(t)           \
  "ldr %[p], [%[taps], #4 * " #t "]\n\t"  \
  "ldrsb %[x], [%[p], %[c]]\n\t"          \
  "ldr %[p], [%[w], #4 + 4 * " #t "]\n\t" \
  MCUFLOW_SCALAR_DW_MAC("%[acc]", "%[x]", "%[p]")

inline int32_t channel_sum(const uintptr_t* taps, const int8_t* c, const int32_t*& w) {
  int32_t acc, p, x;
  __asm__(".syntax unified\n\t"
          "ldr %[acc], [%[w]]\n\t" MCUFLOW_SCALAR_DW_TAP(0) MCUFLOW_SCALAR_DW_TAP(1) MCUFLOW_SCALAR_DW_TAP(2)
              MCUFLOW_SCALAR_DW_TAP(3) MCUFLOW_SCALAR_DW_TAP(4) MCUFLOW_SCALAR_DW_TAP(5) MCUFLOW_SCALAR_DW_TAP(6)
                  MCUFLOW_SCALAR_DW_TAP(7) MCUFLOW_SCALAR_DW_TAP(8)
          ".syntax divided"
          : [acc] "=&l"(acc), [p] "=&l"(p), [x] "=&l"(x)
          : [taps] "l"(taps), [c] "l"(c), [w] "l"(w)
          : "cc", "memory");
  w += 1 + kScalarDwTaps;
  return acc;
}

#undef MCUFLOW_SCALAR_DW_TAP

}  // namespace

void dwconv_s8_3x3_scalar(const DwConvParams& p, const int8_t* input, const int32_t* prepared, int8_t* output) {
  uintptr_t taps[kScalarDwTaps];  // read by channel_sum through memory
  scalar::depthwise_pixels(p, input, prepared, taps, output,
                           [](const uintptr_t* t, const int8_t* c, const int32_t*& w) { return channel_sum(t, c, w); });
}

}  // namespace mcuflow::kernels
