// Table-lookup activation, int16, DSP: the reference's 513-entry table, each input's two
// neighbouring entries read as one word and blended by one SMLAD (lut_s16.h), two inputs per
// word (x + 32768 for both halves by one EOR of their top bits) and two outputs per store.
#include "dsp_blocks.h"
#include "mcuflow/kernels/lut_s16.h"

namespace mcuflow::kernels {

void lut_s16_dsp(const LutParams& p, const int16_t* input, const int16_t* table, int16_t* output) {
  const int32_t n = p.n;
  int32_t i = 0;
  for (; i + 2 <= n; i += 2) {
    const uint32_t u = uint32_t(dsp::read_word(input + i)) ^ 0x80008000u;
    const uint16_t low = uint16_t(dsp::lut_s16_at(table, u & 0xFFFFu)), high = uint16_t(dsp::lut_s16_at(table, u >> 16));
    dsp::write_word(reinterpret_cast<int8_t*>(output + i), uint32_t(low) | uint32_t(high) << 16);
  }
  if (i < n) output[i] = dsp::lut_s16_at(table, uint32_t(input[i] + kLutS16InputOffset));
}

}  // namespace mcuflow::kernels
