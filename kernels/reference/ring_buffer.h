// The ring of a streaming convolution (params.h RingParams): each frame stored at slot s and
// s + slots, so the window of the last `slots` frames is one contiguous run from the head.
#pragma once
#include <cstdint>
#include <cstring>
#include "mcuflow/kernels/params.h"

namespace mcuflow::kernels::detail {

// Writes the run's frames after the newest kept frame, moves the head to the oldest frame of
// the window and returns the window's first element. The head is a state the program keeps:
// taken modulo `slots`, so that no value it holds (a corrupted state) can move a write out of
// the ring.
template <typename T>
const T* ring_push(const RingParams& p, const T* frames, T* ring, int32_t* head) {
  const uint32_t slots = uint32_t(p.slots), frame = uint32_t(p.frame_elements);
  const uint32_t first = uint32_t(*head) % slots;  // where the oldest frame of the last window was
  for (uint32_t i = 0; i < uint32_t(p.frames); ++i) {
    const uint32_t slot = (first + i) % slots;
    std::memcpy(ring + slot * frame, frames + i * frame, frame * sizeof(T));
    std::memcpy(ring + (slot + slots) * frame, frames + i * frame, frame * sizeof(T));
  }
  const uint32_t start = (first + uint32_t(p.frames)) % slots;
  *head = int32_t(start);
  return ring + start * frame;
}

}  // namespace mcuflow::kernels::detail
