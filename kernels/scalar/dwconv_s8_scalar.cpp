// Depthwise conv, any window, int8, Thumb (kernels_scalar.h): the shared walk (depthwise.h), per
// channel bias' plus the taps' products, two taps per loop pass (one LDM of two tap pointers,
// one of two weights), then an odd last tap.
#include "depthwise.h"

namespace mcuflow::kernels {

namespace {

// acc = w[0] + the sum over taps t < 2 * pairs of the input at taps[t] + c (depthwise.h) times
// w[1 + t]; w advanced past them.
inline int32_t pair_sums(const uintptr_t* taps, const uintptr_t* pairs_end, const int8_t* c, const int32_t*& w) {
  int32_t acc;
  __asm__(".syntax unified\n\t"
          "ldmia %[w]!, {%[acc]}\n\t"
          "cmp %[taps], %[end]\n\t"
          "beq 2f\n\t"
          "1:\n\t"
          "ldmia %[taps]!, {r4, r5}\n\t"
          "ldrsb r4, [r4, %[c]]\n\t"
          "ldrsb r5, [r5, %[c]]\n\t"
          "ldmia %[w]!, {r6, r7}\n\t" MCUFLOW_SCALAR_DW_MAC("%[acc]", "r4", "r6") MCUFLOW_SCALAR_DW_MAC("%[acc]", "r5", "r7")
          "cmp %[taps], %[end]\n\t"
          "bne 1b\n\t"
          "2:\n\t"
          ".syntax divided"
          : [acc] "=&l"(acc), [taps] "+l"(taps), [w] "+l"(w)
          : [c] "l"(c), [end] "h"(pairs_end)
          : "r4", "r5", "r6", "r7", "cc", "memory");
  return acc;
}

}  // namespace

void dwconv_s8_scalar(const DwConvParams& p, const int8_t* input, const int32_t* prepared, uintptr_t* taps,
                      int8_t* output) {
  const int32_t tap_count = scalar_dw_taps(p);
  const uintptr_t* pairs_end = taps + (tap_count & ~1);
  scalar::depthwise_pixels(p, input, prepared, taps, output, [&](const uintptr_t* t, const int8_t* c, const int32_t*& w) {
    int32_t acc = pair_sums(t, pairs_end, c, w);
    if (tap_count & 1) acc += *reinterpret_cast<const int8_t*>(*pairs_end + reinterpret_cast<uintptr_t>(c)) * *w++;
    return acc;
  });
}

}  // namespace mcuflow::kernels
