// Requantize, int8, MVE: the output is a function of the input byte alone, so the compiler
// tabulates it (requantize_table_entry) and a byte gather looks sixteen lanes up per step of a
// tail-predicated loop. Each step reads its sixteen inputs before writing them, so it runs in
// place.
#include "mve_blocks.h"

namespace mcuflow::kernels {

void requantize_s8_mve(const RequantizeParams& p, const int8_t* input, const int8_t* table, int8_t* output) {
  const uint8_t* entries = reinterpret_cast<const uint8_t*>(table);
  for (int32_t i = 0; i < p.n; i += kMveChunk) {
    const mve_pred16_t valid = vctp8q(uint32_t(p.n - i));
    const uint8x16_t bytes = vldrbq_z_u8(reinterpret_cast<const uint8_t*>(input) + i, valid);
    vstrbq_p_u8(reinterpret_cast<uint8_t*>(output) + i, vldrbq_gather_offset_z_u8(entries, bytes, valid), valid);
  }
}

}  // namespace mcuflow::kernels
