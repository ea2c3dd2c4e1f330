// Verification of the inputs the compiler prepares for scalar kernels (kernels_scalar.h): the
// reference's weights, bias and tables are constants (possibly copied into fast RAM at bind:
// the records still locate the originals), and the prepared input equals its recomputation
// from them, so the device computes what the host's reference kernel computes.
#pragma once
#include "../check.h"
#include "checks.h"

namespace mcuflow::ops::scalar {

template <typename T>
const T* constant_data(const OpCheck& c, uint32_t slot) {
  return reinterpret_cast<const T*>(c.constants + c.tensor(slot).offset);
}

// word(weights, bias, multipliers, shifts, i) recomputes prepared word i.
template <typename Word>
bool prepared_matches(const OpCheck& c, int32_t words, Word word) {
  if (!weighted_inputs_constant(c)) return false;
  const auto* weights = constant_data<int8_t>(c, kernels::kWeightsSlot);
  const auto* bias = constant_data<int32_t>(c, kernels::kBiasSlot);
  const auto* multipliers = constant_data<int32_t>(c, kernels::kMultipliersSlot);
  const auto* shifts = constant_data<int32_t>(c, kernels::kShiftsSlot);
  return table_matches<int32_t>(c, kernels::kScalarPreparedSlot, format::DType::kInt32, words,
                                [&](int32_t i) { return word(weights, bias, multipliers, shifts, i); });
}

// The scratch in kScalarWindowSlot (tap pointers, widened rows: words) lies in the arena, word
// aligned, and holds `bytes`.
inline bool scratch_holds(const OpCheck& c, int64_t bytes) {
  const format::TensorRecord& scratch = c.tensor(kernels::kScalarWindowSlot);
  return scratch.storage == format::Storage::kArena && scratch.offset % 4 == 0 && scratch.bytes >= uint64_t(bytes);
}

}  // namespace mcuflow::ops::scalar
