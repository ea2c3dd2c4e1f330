#include "check.h"

namespace mcuflow::ops {

bool bias_fits_accumulator(const OpCheck& c, uint32_t bias_slot, uint64_t channels, uint64_t reduction) {
  const format::TensorRecord& b = c.tensor(bias_slot);
  if (b.storage != format::Storage::kConstant) return false;
  const int32_t* bias = reinterpret_cast<const int32_t*>(c.constants + b.offset);
  const int64_t max_acc = int64_t(reduction) * 255 * 128;
  for (uint64_t i = 0; i < channels; ++i) {
    const int64_t magnitude = bias[i] < 0 ? -int64_t(bias[i]) : int64_t(bias[i]);
    if (magnitude + max_acc > INT32_MAX) return false;
  }
  return true;
}

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
