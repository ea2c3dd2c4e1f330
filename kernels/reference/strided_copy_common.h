// Shared loop of strided_copy_b8 / strided_copy_b32: walks the output in order and keeps, per
// dim, the source index floor(o * num / den) as a quotient and remainder that advance by
// num / den per step, so the loop itself never divides.
#pragma once
#include <cstdint>

#include "mcuflow/kernels/params.h"

namespace mcuflow::kernels::detail {

struct SourceIndex {
  int32_t index, remainder;  // start + floor(o * num / den), (o * num) mod den
  int32_t quotient_step, remainder_step, den;

  SourceIndex(const StridedCopyParams& p, int d)
      : index(p.start[d]), remainder(0), quotient_step(p.num[d] / p.den[d]),
        remainder_step(p.num[d] % p.den[d]), den(p.den[d]) {}
  void advance() {
    index += quotient_step;
    remainder += remainder_step;
    if (remainder >= den) {
      remainder -= den;
      ++index;
    }
  }
};

template <typename T>
void strided_copy(const StridedCopyParams& p, const T* input, T* output, T fill) {
  int32_t in_stride[4];
  in_stride[3] = 1;
  for (int d = 2; d >= 0; --d) in_stride[d] = in_stride[d + 1] * p.in_dims[d + 1];
  auto inside = [&](const SourceIndex& s, int d) { return s.index >= 0 && s.index < p.in_dims[d]; };
  SourceIndex s0(p, 0);
  for (int32_t i0 = 0; i0 < p.out_dims[0]; ++i0, s0.advance()) {
    SourceIndex s1(p, 1);
    for (int32_t i1 = 0; i1 < p.out_dims[1]; ++i1, s1.advance()) {
      SourceIndex s2(p, 2);
      for (int32_t i2 = 0; i2 < p.out_dims[2]; ++i2, s2.advance()) {
        const bool row_inside = inside(s0, 0) && inside(s1, 1) && inside(s2, 2);
        const T* row = input + (row_inside ? s0.index * in_stride[0] + s1.index * in_stride[1] +
                                                 s2.index * in_stride[2]
                                           : 0);
        SourceIndex s3(p, 3);
        for (int32_t i3 = 0; i3 < p.out_dims[3]; ++i3, s3.advance()) {
          *output++ = row_inside && inside(s3, 3) ? row[s3.index] : fill;
        }
      }
    }
  }
}

}  // namespace mcuflow::kernels::detail
