// Shared loop of argmax_s8 / argmax_f32: index of the first maximum along the middle axis of
// [outer][reduce][inner] (PyTorch returns the first one too).
#pragma once
#include <cstdint>

#include "mcuflow/kernels/params.h"

namespace mcuflow::kernels::detail {

template <typename T>
void argmax(const ArgmaxParams& p, const T* input, int32_t* output) {
  for (int32_t o = 0; o < p.outer; ++o) {
    for (int32_t i = 0; i < p.inner; ++i) {
      const T* in = input + o * p.reduce * p.inner + i;
      int32_t best = 0;
      for (int32_t r = 1; r < p.reduce; ++r) {
        if (in[r * p.inner] > in[best * p.inner]) best = r;
      }
      *output++ = best;
    }
  }
}

}  // namespace mcuflow::kernels::detail
