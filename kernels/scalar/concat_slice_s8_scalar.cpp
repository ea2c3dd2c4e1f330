// One input of a channel concatenation, int8, Armv6-M (kernels_scalar.h): rows moved as words
// where input and output align alike, requantized by the 256-entry table (lookup_bytes).
#include "byte_lookup.h"
#include "byte_moves.h"
#include "mcuflow/kernels/kernels_scalar.h"

namespace mcuflow::kernels {

void concat_slice_s8_scalar(const ConcatSliceParams& p, const int8_t* input, const int8_t* table, int8_t* output) {
  if (table != nullptr) {
    concat_runs(p, input, output, [table](const int8_t* in, int8_t* out, int32_t n) {
      scalar::lookup_bytes<uint8_t>(n, in, table, out);
    });
  } else {
    concat_runs(p, input, output, [](const int8_t* in, int8_t* out, int32_t n) { scalar::copy_bytes(n, in, out); });
  }
}

}  // namespace mcuflow::kernels
