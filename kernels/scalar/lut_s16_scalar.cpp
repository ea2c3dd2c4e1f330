// Table-lookup activation, int16, Armv6-M (kernels_scalar.h): the reference's 513-entry table
// indexed from its middle, so the input needs no offset: (x + 32768) >> 7 = (x >> 7) + 256 and
// (x + 32768) & 127 = x & 127. The blend lo + ((hi - lo) * f + 64) >> 7 equals lut_s16.h's. In
// assembly: GCC rebuilds the constants and the second entry's address in the loop (25
// instructions per value); here 16, each value loaded before its output is stored.
#include "mcuflow/kernels/kernels_scalar.h"
#include "mcuflow/kernels/lut_s16.h"

namespace mcuflow::kernels {

void lut_s16_scalar(const LutParams& p, const int16_t* input, const int16_t* table, int16_t* output) {
  const int16_t* const in_end = input + p.n;
  int16_t* const out_end = output + p.n;
  const int16_t* const middle = table + (kLutS16Entries - 1) / 2;
  int32_t offset = -2 * p.n;  // bytes from the ends, up to 0 (p.n >= 1: the check)
  int32_t x, at, lo;
  __asm__ volatile(
      ".syntax unified\n\t"
      "1:\n\t"
      "ldrsh %[x], [%[in_end], %[offset]]\n\t"
      "asrs %[at], %[x], #7\n\t"
      "lsls %[at], %[at], #1\n\t"
      "ldrsh %[lo], [%[middle], %[at]]\n\t"
      "adds %[at], #2\n\t"
      "ldrsh %[at], [%[middle], %[at]]\n\t"  // hi
      "lsls %[x], %[x], #25\n\t"
      "lsrs %[x], %[x], #25\n\t"  // f
      "subs %[at], %[at], %[lo]\n\t"
      "muls %[at], %[x], %[at]\n\t"
      "adds %[at], #64\n\t"
      "asrs %[at], %[at], #7\n\t"
      "adds %[at], %[at], %[lo]\n\t"
      "strh %[at], [%[out_end], %[offset]]\n\t"
      "adds %[offset], #2\n\t"
      "bne 1b\n\t"
      : [offset] "+l"(offset), [x] "=&l"(x), [at] "=&l"(at), [lo] "=&l"(lo)
      : [in_end] "l"(in_end), [out_end] "l"(out_end), [middle] "l"(middle)
      : "cc", "memory");
}

}  // namespace mcuflow::kernels
