// The scalar tier's block moves, shared by concat_slice_s8_scalar and strided_copy_b8_scalar.
// Kernel-private: only kernels/scalar/*.cpp include it. Armv6-M has no unaligned word access, so
// words move only where source and destination share their alignment, the first bytes bytewise.
#pragma once
#include <cstdint>
#include <cstring>

namespace mcuflow::kernels::scalar {

// n bytes from `from` to `to`, four words per step where both align alike. Each step reads
// before it writes: onto itself it stays correct.
inline void copy_bytes(int32_t n, const int8_t* from, int8_t* to) {
  const int8_t* const end = to + n;
  if (((uintptr_t(from) ^ uintptr_t(to)) & 3u) == 0) {
    while ((uintptr_t(to) & 3u) != 0 && to != end) *to++ = *from++;
    auto* words_to = reinterpret_cast<uint32_t*>(to);
    const auto* words_from = reinterpret_cast<const uint32_t*>(from);
    for (int32_t words = int32_t(end - to) / 4; words >= 4; words -= 4, words_to += 4, words_from += 4) {
      const uint32_t a = words_from[0], b = words_from[1], c = words_from[2], d = words_from[3];
      words_to[0] = a, words_to[1] = b, words_to[2] = c, words_to[3] = d;
    }
    for (; int32_t(end - reinterpret_cast<int8_t*>(words_to)) >= 4; ++words_to, ++words_from) *words_to = *words_from;
    to = reinterpret_cast<int8_t*>(words_to);
    from = reinterpret_cast<const int8_t*>(words_from);
  }
  while (to != end) *to++ = *from++;
}

// n bytes of `value` from `to`, a word at a time once aligned.
inline void fill_bytes(int32_t n, int8_t value, int8_t* to) {
  int8_t* const end = to + n;
  while ((uintptr_t(to) & 3u) != 0 && to != end) *to++ = value;
  const uint32_t word = uint8_t(value) * 0x01010101u;
  for (; end - to >= 4; to += 4) *reinterpret_cast<uint32_t*>(to) = word;
  while (to != end) *to++ = value;
}

}  // namespace mcuflow::kernels::scalar
