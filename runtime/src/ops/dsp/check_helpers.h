// Verification of the inputs the compiler prepares for DSP kernels (kernels_dsp.h): weights
// prepared from the reference's must match their recomputation exactly, so the device
// computes what the host's reference kernel computes; scratch must be arena of the right size.
#pragma once
#include "../check.h"
#include "checks.h"
#include "mcuflow/kernels/kernels_dsp.h"

namespace mcuflow::ops::dsp {

// The constant int32 tensor at `slot` has `words` elements, word aligned, each equal to
// word(i) (the function that prepared it).
template <typename Word>
bool prepared_matches(const OpCheck& c, uint32_t slot, int32_t words, Word word) {
  return table_matches<int32_t>(c, slot, format::DType::kInt32, words, word);
}

inline const int8_t* weights(const OpCheck& c) {
  return reinterpret_cast<const int8_t*>(c.constants + c.tensor(kernels::kWeightsSlot).offset);
}

// An arena tensor of at least `bytes`, word aligned (the kernels load it by words).
inline bool scratch_fits(const OpCheck& c, uint32_t slot, uint64_t bytes) {
  const format::TensorRecord& t = c.tensor(slot);
  return t.storage == format::Storage::kArena && t.offset % 4 == 0 && t.bytes >= bytes;
}

}  // namespace mcuflow::ops::dsp
