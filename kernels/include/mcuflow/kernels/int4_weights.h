// Packed int4 weights (W4A8, docs/quantization.md "int4 weights"): element i in the low nibble of
// byte i / 2 when i is even, in the high nibble when odd, each nibble two's complement (-8 ... 7).
// What the reference kernels, the tier kernels, the compiler rules and the load-time checks share
// about them: reading one weight, and unpacking a tensor to int8 (the tier kernels unpack into
// their arena scratch, then run the int8 tier kernel's loops on the copy).
#pragma once
#include <cstdint>

namespace mcuflow::kernels {

// Weight i of a packed int4 tensor, sign-extended: exactly the int8 value it was packed from.
inline int32_t weight_s4(const uint8_t* packed, int32_t i) {
  const int32_t nibble = (i & 1) ? packed[i >> 1] >> 4 : packed[i >> 1] & 0xF;
  return nibble - ((nibble & 8) << 1);
}

// A packed tensor read as its values: weights[i] = weight_s4(packed, i) (where an int8 kernel's
// preparation reads int8 weights[i]).
struct PackedInt4Weights {
  const uint8_t* packed;
  int32_t operator[](int32_t i) const { return weight_s4(packed, i); }
};

// Bytes a tier kernel's scratch gives the unpacked copy of `count` int4 weights: whole 16-byte
// chunks, so that the int8 kernel's own scratch after it stays aligned.
constexpr int32_t w4_unpacked_bytes(int32_t count) { return (count + 15) & ~15; }

// out[i] = weight i of `packed`, i < count, a byte at a time: the tier kernels' unpackers finish with it.
inline void unpack_s4(const uint8_t* packed, int32_t count, int8_t* out) {
  for (int32_t i = 0; i + 1 < count; i += 2, ++packed) {
    out[i] = int8_t(int8_t(*packed << 4) >> 4);
    out[i + 1] = int8_t(int8_t(*packed) >> 4);
  }
  if (count & 1) out[count - 1] = int8_t(int8_t(*packed << 4) >> 4);
}

}  // namespace mcuflow::kernels
