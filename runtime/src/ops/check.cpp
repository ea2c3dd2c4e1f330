#include "check.h"

#include "mcuflow/kernels/arith.h"

namespace mcuflow::ops {

bool bias_fits_accumulator(const OpCheck& c, uint32_t bias_slot, uint64_t channels, uint64_t reduction) {
  const format::TensorRecord& b = c.tensor(bias_slot);
  if (b.storage != format::Storage::kConstant) return false;
  const bool wide = b.dtype == format::DType::kInt64;
  const int64_t limit = wide ? kernels::kWideAccumulatorLimit - 1 : INT32_MAX;
  // The weights in slot 1: int8 (|w| <= 128) or packed int4 (|w| <= 8).
  const uint64_t largest_weight = uint64_t(-format::dtype_min(c.tensor(1).dtype));
  const uint64_t largest_product = (wide ? 32768 : 255) * largest_weight;
  if (reduction > uint64_t(limit) / largest_product) return false;
  const int64_t max_acc = int64_t(reduction * largest_product);
  const uint8_t* bias = c.constants + b.offset;
  for (uint64_t i = 0; i < channels; ++i) {
    const int64_t v = wide ? reinterpret_cast<const int64_t*>(bias)[i] : reinterpret_cast<const int32_t*>(bias)[i];
    if (v < -limit || v > limit || (v < 0 ? -v : v) + max_acc > limit) return false;
  }
  return true;
}

bool weighted_quantization_valid(const OpCheck& c, format::DType act, int32_t input_offset,
                                 const kernels::OutputStage& out, uint64_t tables, uint64_t channels,
                                 uint64_t reduction) {
  const bool wide = act == format::DType::kInt16;
  const bool offsets = wide ? input_offset == 0 && out.output_offset == 0 : input_offset_valid(input_offset);
  return offsets && output_stage_valid(out, act) &&
         requant_tables_valid(c, 3, 4, tables, wide ? kernels::kWideMaxShift : 30) &&
         bias_fits_accumulator(c, 2, channels, reduction);
}

bool requant_tables_valid(const OpCheck& c, uint32_t mult_slot, uint32_t shift_slot, uint64_t count, int32_t max_shift) {
  if (!tensor_is(c, mult_slot, format::DType::kInt32, count) ||
      !tensor_is(c, shift_slot, format::DType::kInt32, count))
    return false;
  const format::TensorRecord& m = c.tensor(mult_slot);
  const format::TensorRecord& s = c.tensor(shift_slot);
  if (m.storage != format::Storage::kConstant || s.storage != format::Storage::kConstant) return false;
  const int32_t* mult = reinterpret_cast<const int32_t*>(c.constants + m.offset);
  const int32_t* shift = reinterpret_cast<const int32_t*>(c.constants + s.offset);
  for (uint64_t i = 0; i < count; ++i) {
    if (mult[i] < 0 || !in_range(shift[i], -31, max_shift)) return false;
  }
  return true;
}

}  // namespace mcuflow::ops
