// The int16 lookup table every lut_s16 and softmax_s16 kernel reads, and its interpolation,
// stated once so that every tier computes the same bits.
//
// A table holds kLutS16Entries int16 values of a function at evenly spaced points of its 16-bit
// input u = 0..65535: entry i at u = i * kLutS16Step (the last entry, at u = 65536, closes the
// last interval). An input u between entries lo = t[u >> 7] and hi = t[(u >> 7) + 1], f = u & 127
// of the way from lo, reads
//     (lo * (128 - f) + hi * f + 64) >> 7      (an arithmetic shift: rounding half up)
// which equals lo + ((hi - lo) * f + 64) >> 7. Every product and sum fits int32 (|lo|, |hi| <=
// 32768), and the result lies between lo and hi, so it fits int16.
#pragma once
#include <cstdint>

namespace mcuflow::kernels {

constexpr int32_t kLutS16StepBits = 7;
constexpr int32_t kLutS16Step = 1 << kLutS16StepBits;                // inputs per interval
constexpr int32_t kLutS16Entries = (65536 >> kLutS16StepBits) + 1;  // 513
constexpr int32_t kLutS16InputOffset = 32768;                       // lut_s16: u = x + 32768

// The weighted sum of two neighbouring entries f / 128 of the way from lo to hi (f in 0..127).
inline int32_t lut_s16_blend(int32_t lo, int32_t hi, int32_t f) {
  return (lo * (kLutS16Step - f) + hi * f + (kLutS16Step >> 1)) >> kLutS16StepBits;
}

// The table's value at input u (0..65535).
inline int16_t lut_s16_at(const int16_t* table, uint32_t u) {
  const uint32_t i = u >> kLutS16StepBits;
  return int16_t(lut_s16_blend(table[i], table[i + 1], int32_t(u & (kLutS16Step - 1))));
}

}  // namespace mcuflow::kernels
