// Streaming dwconv_f32: the run's frames appended to the ring, then dwconv_f32 over its window.
#include "mcuflow/kernels/kernels.h"
#include "ring_buffer.h"

namespace mcuflow::kernels {

void ring_dwconv_f32(const RingDwConvParams& p, const float* frames, const float* weights, const float* bias, float* output, float* ring, int32_t* head) {
  dwconv_f32(p.conv, detail::ring_push(p.ring, frames, ring, head), weights, bias, output);
}

}  // namespace mcuflow::kernels
