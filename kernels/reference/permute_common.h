// Shared loop of permute_b8 / permute_b32: walks the output in order and gathers from the
// input through the permuted strides.
#pragma once
#include <cstdint>

#include "mcuflow/kernels/params.h"

namespace mcuflow::kernels::detail {

template <typename T>
void permute(const PermuteParams& p, const T* input, T* output) {
  int32_t in_stride[4];
  in_stride[3] = 1;
  for (int k = 2; k >= 0; --k) in_stride[k] = in_stride[k + 1] * p.in_dims[k + 1];
  int32_t dim[4], stride[4];  // output dim k walks input axis perm[k]
  for (int k = 0; k < 4; ++k) {
    dim[k] = p.in_dims[p.perm[k]];
    stride[k] = in_stride[p.perm[k]];
  }
  for (int32_t i0 = 0; i0 < dim[0]; ++i0) {
    for (int32_t i1 = 0; i1 < dim[1]; ++i1) {
      for (int32_t i2 = 0; i2 < dim[2]; ++i2) {
        const T* in = input + i0 * stride[0] + i1 * stride[1] + i2 * stride[2];
        for (int32_t i3 = 0; i3 < dim[3]; ++i3) *output++ = in[i3 * stride[3]];
      }
    }
  }
}

}  // namespace mcuflow::kernels::detail
