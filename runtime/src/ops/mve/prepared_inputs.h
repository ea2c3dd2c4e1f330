// Load-time verification shared by the MVE adapters: an MVE op's input 5 must hold exactly
// the prepared input (kernels_mve.h) that follows from its reference inputs 1-4, so the MVE
// kernel computes what the reference kernel computes; input 6, where there is one, is the
// kernel's scratch.
#pragma once
#include "../check.h"
#include "mcuflow/kernels/kernels_mve.h"

namespace mcuflow::ops::mve {

constexpr uint32_t kPreparedSlot = 5;
constexpr uint32_t kScratchSlot = 6;
// Bounds the layouts' int32 index arithmetic (no microcontroller holds larger weights).
constexpr uint32_t kMaxWeightBytes = 1u << 24;

template <typename T>
const T* constant_data(const OpCheck& c, uint32_t slot) {
  const format::TensorRecord& t = c.tensor(slot);
  return t.storage == format::Storage::kConstant ? reinterpret_cast<const T*>(c.constants + t.offset) : nullptr;
}

// `c` passed its reference check; requantization arrays have out_c entries, or one when
// !per_channel_requant.
template <typename Layout>
bool prepared_input_valid(const OpCheck& c, const Layout& layout, int32_t input_offset, bool per_channel_requant) {
  if (c.tensor(1).bytes >= kMaxWeightBytes) return false;
  const int32_t bytes = layout.blocks() * layout.block_bytes();
  const kernels::MveReferenceInputs reference{constant_data<int8_t>(c, 1), constant_data<int32_t>(c, 2),
                                              constant_data<int32_t>(c, 3), constant_data<int32_t>(c, 4),
                                              per_channel_requant, input_offset};
  const uint8_t* prepared = constant_data<uint8_t>(c, kPreparedSlot);
  if (!tensor_is(c, kPreparedSlot, format::DType::kInt8, uint64_t(bytes)) || !prepared || !reference.weights ||
      !reference.bias || !reference.multipliers || !reference.shifts)
    return false;
  int32_t at = 0;
  return kernels::mve_emit_prepared(layout, reference, [&](uint8_t byte) { return prepared[at++] == byte; });
}

// The scratch: `bytes` of int8 in the arena (the kernel writes it).
inline bool scratch_valid(const OpCheck& c, uint64_t bytes) {
  return c.op->input_count > kScratchSlot && c.tensor(kScratchSlot).storage == format::Storage::kArena &&
         tensor_is(c, kScratchSlot, format::DType::kInt8, bytes);
}

inline int8_t* scratch(const OpCall& c) { return reinterpret_cast<int8_t*>(c.data[kScratchSlot]); }

}  // namespace mcuflow::ops::mve
