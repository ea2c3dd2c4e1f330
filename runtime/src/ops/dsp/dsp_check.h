// Verification of the inputs the compiler prepares for DSP kernels (kernels_dsp.h): each is
// recomputed from the reference's inputs and must match exactly, so the device computes what
// the host's reference kernel computes.
#pragma once
#include <cstring>

#include "../check.h"
#include "mcuflow/kernels/kernels_dsp.h"

namespace mcuflow::ops::dsp {

// Weights, bias and requantization tables (slots 1-4) are constants.
inline bool constant_inputs(const OpCheck& c) {
  for (uint32_t slot = 1; slot <= 4; ++slot) {
    if (c.tensor(slot).storage != format::Storage::kConstant) return false;
  }
  return true;
}

inline const int32_t* constant_words(const OpCheck& c, uint32_t slot) {
  return reinterpret_cast<const int32_t*>(c.constants + c.tensor(slot).offset);
}

// A word-aligned constant int32 tensor of `words` elements.
inline bool constant_table(const OpCheck& c, uint32_t slot, uint64_t words) {
  const format::TensorRecord& t = c.tensor(slot);
  return tensor_is(c, slot, format::DType::kInt32, words) && t.storage == format::Storage::kConstant &&
         t.offset % 4 == 0;
}

// `table` (out_c entries) is dsp_channel() of the reference's bias (slot 2), multipliers (3)
// and shifts (4), with one multiplier and shift per channel or one for all.
inline bool channel_table_matches(const OpCheck& c, const kernels::DspChannel* table, int32_t out_c, bool per_channel,
                                  int32_t output_offset, int64_t depth) {
  const int32_t *bias = constant_words(c, 2), *multipliers = constant_words(c, 3), *shifts = constant_words(c, 4);
  for (int32_t oc = 0; oc < out_c; ++oc) {
    const int32_t q = per_channel ? oc : 0;
    const kernels::DspChannel expected = kernels::dsp_channel(bias[oc], multipliers[q], shifts[q], output_offset, depth);
    if (std::memcmp(&expected, &table[oc], sizeof(expected)) != 0) return false;
  }
  return true;
}

// The same for a table that is the whole constant input at `slot`.
inline bool channel_table_matches(const OpCheck& c, uint32_t slot, int32_t out_c, bool per_channel,
                                  int32_t output_offset, int64_t depth) {
  return constant_table(c, slot, uint64_t(out_c) * sizeof(kernels::DspChannel) / 4) &&
         channel_table_matches(c, reinterpret_cast<const kernels::DspChannel*>(constant_words(c, slot)), out_c,
                               per_channel, output_offset, depth);
}

// An arena tensor of at least `bytes`, word aligned (the kernels load it by words).
inline bool scratch_fits(const OpCheck& c, uint32_t slot, uint64_t bytes) {
  const format::TensorRecord& t = c.tensor(slot);
  return t.storage == format::Storage::kArena && t.offset % 4 == 0 && t.bytes >= bytes;
}

}  // namespace mcuflow::ops::dsp
