// Streaming conv_s8: the run's frames appended to the ring, then conv_s8 over its window.
#include "mcuflow/kernels/kernels.h"
#include "ring_buffer.h"

namespace mcuflow::kernels {

void ring_conv_s8(const RingConvParams& p, const int8_t* frames, const int8_t* weights, const int32_t* bias, const int32_t* multipliers, const int32_t* shifts, int8_t* output, int8_t* ring, int32_t* head) {
  conv_s8(p.conv, detail::ring_push(p.ring, frames, ring, head), weights, bias, multipliers, shifts, output);
}

}  // namespace mcuflow::kernels
