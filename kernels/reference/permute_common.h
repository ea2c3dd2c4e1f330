// Shared loop of permute_b8 / permute_b32: walks the output in order and gathers from the
// input through the permuted strides.
#pragma once
#include <cstdint>

#include "mcuflow/kernels/params.h"

namespace mcuflow::kernels::detail {

template <typename T>
void permute(const PermuteParams& p, const T* input, T* output) {
  constexpr int kRank = int(kMaxRank);
  int32_t in_stride[kRank];
  in_stride[kRank - 1] = 1;
  for (int k = kRank - 2; k >= 0; --k) in_stride[k] = in_stride[k + 1] * p.in_dims[k + 1];
  int32_t dim[kRank], stride[kRank];  // output dim k walks input axis perm[k]
  for (int k = 0; k < kRank; ++k) {
    dim[k] = p.in_dims[p.perm[k]];
    stride[k] = in_stride[p.perm[k]];
  }
  // An odometer over the outer dims; each step copies one row of the innermost output dim.
  int32_t index[kRank - 1] = {};
  const T* row = input;
  for (;;) {
    for (int32_t i = 0; i < dim[kRank - 1]; ++i) *output++ = row[i * stride[kRank - 1]];
    int k = kRank - 2;
    for (; k >= 0; --k) {
      row += stride[k];
      if (++index[k] < dim[k]) break;
      row -= stride[k] * dim[k];
      index[k] = 0;
    }
    if (k < 0) return;
  }
}

}  // namespace mcuflow::kernels::detail
