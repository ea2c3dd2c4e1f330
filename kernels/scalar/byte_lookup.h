// The scalar tier's table lookup, shared by requantize_s8_scalar and lut_s8_scalar.
// Kernel-private: only kernels/scalar/*.cpp include it.
#pragma once
#include <cstdint>
#include <type_traits>

namespace mcuflow::kernels::scalar {

// Each byte of `input` looked up in a 256-entry table, read as a Byte: uint8_t indexes the table
// from its start, int8_t from its middle (entry b + 128), so neither pays for the index's
// conversion (LDRB/LDRSB with a register offset). Four loads before the first store: in place
// (output == input) stays correct.
template <typename Byte>
inline void lookup_bytes(int32_t n, const int8_t* input, const int8_t* table, int8_t* output) {
  const int8_t* const base = std::is_signed_v<Byte> ? table + 128 : table;
  const auto* in = reinterpret_cast<const Byte*>(input);
  int8_t* const end = output + n;
  for (int8_t* const fours_end = output + (n & ~3); output != fours_end; output += 4, in += 4) {
    const Byte b0 = in[0], b1 = in[1], b2 = in[2], b3 = in[3];
    output[0] = base[b0];
    output[1] = base[b1];
    output[2] = base[b2];
    output[3] = base[b3];
  }
  while (output != end) *output++ = base[*in++];
}

}  // namespace mcuflow::kernels::scalar
