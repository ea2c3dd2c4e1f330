// One input of a channel concatenation, int8, DSP (kernels_dsp.h): rows moved two words per
// step, requantized by the 256-entry table a word of four bytes at a time.
#include "dsp_blocks.h"
#include "mcuflow/kernels/elementwise_tiers.h"

namespace mcuflow::kernels {

void concat_slice_s8_dsp(const ConcatSliceParams& p, const int8_t* input, const int8_t* table, int8_t* output) {
  if (table != nullptr) {
    concat_runs(p, input, output, [table](const int8_t* in, int8_t* out, int32_t n) {
      dsp::lookup_bytes<0>(n, in, table, out);
    });
  } else {
    concat_runs(p, input, output, [](const int8_t* in, int8_t* out, int32_t n) { dsp::copy_bytes(n, in, out); });
  }
}

}  // namespace mcuflow::kernels
