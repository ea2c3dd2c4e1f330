#include "check.h"

namespace mcuflow::ops {

bool requant_tables_valid(const OpCheck& c, uint32_t mult_slot, uint32_t shift_slot, uint64_t count) {
  if (!tensor_is(c, mult_slot, format::DType::kInt32, count) ||
      !tensor_is(c, shift_slot, format::DType::kInt32, count))
    return false;
  const format::TensorRecord& m = c.tensor(mult_slot);
  const format::TensorRecord& s = c.tensor(shift_slot);
  if (m.storage != format::Storage::kConstant || s.storage != format::Storage::kConstant) return false;
  const int32_t* mult = reinterpret_cast<const int32_t*>(c.constants + m.offset);
  const int32_t* shift = reinterpret_cast<const int32_t*>(c.constants + s.offset);
  for (uint64_t i = 0; i < count; ++i) {
    if (mult[i] < 0 || !in_range(shift[i], -31, 30)) return false;
  }
  return true;
}

}  // namespace mcuflow::ops
