// Embedding lookup: rows of a constant table by int32 ids. Every id is checked before any row
// is copied, so an out-of-range id leaves the output untouched and the run reports it.
#include "mcuflow/kernels/kernels.h"

namespace mcuflow::kernels {

bool gather_rows(const GatherRowsParams& p, const int32_t* ids, const uint8_t* table, uint8_t* output) {
  for (int32_t i = 0; i < p.count; ++i)
    if (ids[i] < 0 || ids[i] >= p.rows) return false;
  for (int32_t i = 0; i < p.count; ++i) {
    const uint8_t* row = table + int64_t(ids[i]) * p.row_bytes;
    uint8_t* out = output + int64_t(i) * p.row_bytes;
    for (int32_t k = 0; k < p.row_bytes; ++k) out[k] = row[k];
  }
  return true;
}

}  // namespace mcuflow::kernels
