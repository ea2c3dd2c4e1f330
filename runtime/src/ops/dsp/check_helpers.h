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

// The same for a prepared input the kernel header walks in order: walk(same) hands each word to
// same(value), which compares it with the next stored one (inlined: -Os would call it per word).
// These inputs (conv_s8_1x1_dsp's, dwconv_s8_3x3_dsp's) hold weights and requantization values
// that the kernels only compute with, never address by: memory safety needs their record alone,
// so Verify::kStructure skips the comparison (tests/firmware/test_verification_levels.py).
template <typename Walk>
bool walk_matches(const OpCheck& c, uint32_t slot, int32_t words, Walk walk) {
  const int32_t* stored = table_of<int32_t>(c, slot, format::DType::kInt32, words);
  if (stored == nullptr) return false;
  if (!c.values) return true;
  const load_profile::PreparedTableScope profiled;
  return walk([&stored](int32_t v) __attribute__((always_inline)) { return *stored++ == v; });
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
