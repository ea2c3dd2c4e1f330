// One input of a channel concatenation, int8, MVE (kernels_mve.h): rows moved sixteen bytes per
// VLDRB/VSTRB with a predicated tail, requantized by a byte gather from the 256-entry table.
#include "mve_blocks.h"
#include "mcuflow/kernels/elementwise_tiers.h"

namespace mcuflow::kernels {

void concat_slice_s8_mve(const ConcatSliceParams& p, const int8_t* input, const int8_t* table, int8_t* output) {
  if (table != nullptr) {
    concat_runs(p, input, output, [table](const int8_t* in, int8_t* out, int32_t n) {
      mve::lookup_bytes<0>(n, in, table, out);
    });
  } else {
    concat_runs(p, input, output, [](const int8_t* in, int8_t* out, int32_t n) { mve::copy_bytes(n, in, out); });
  }
}

}  // namespace mcuflow::kernels
