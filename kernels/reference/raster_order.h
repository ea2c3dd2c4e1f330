// The output-pixel walk of the window kernels (conv, depthwise conv). The planner may run them in
// place: the output then overlaps the input, starting below it (walk forwards) or above it (walk
// backwards), so every input pixel is read before an output pixel lands on it
// (docs/memory_planning.md). With separate buffers the order changes nothing.
#pragma once
#include <cstdint>

namespace mcuflow::kernels::detail {

// Forwards unless the output starts above the input.
inline bool walks_forward(const void* input, const void* output) {
  return reinterpret_cast<uintptr_t>(output) <= reinterpret_cast<uintptr_t>(input);
}

template <typename In, typename Out, typename Pixel>
void for_each_output_pixel(int32_t out_h, int32_t out_w, const In* input, const Out* output, Pixel pixel) {
  if (walks_forward(input, output)) {
    for (int32_t oy = 0; oy < out_h; ++oy)
      for (int32_t ox = 0; ox < out_w; ++ox) pixel(oy, ox);
  } else {
    for (int32_t oy = out_h - 1; oy >= 0; --oy)
      for (int32_t ox = out_w - 1; ox >= 0; --ox) pixel(oy, ox);
  }
}

}  // namespace mcuflow::kernels::detail
