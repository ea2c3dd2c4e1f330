// Shared loop of strided_copy_b8 / strided_copy_b32: walks the output in order and keeps, per
// dim, the source index floor(o * num / den) as a quotient and remainder that advance by
// num / den per step, so the loop itself never divides. A row whose source advances one element
// per element (slices, pads, concatenations: num == den) is moved as one block between fills.
#pragma once
#include <cstdint>

#include "mcuflow/kernels/arith.h"
#include "mcuflow/kernels/params.h"

namespace mcuflow::kernels::detail {

struct SourceIndex {
  int32_t index, remainder;  // start + floor(o * num / den), (o * num) mod den
  int32_t quotient_step, remainder_step, den;

  SourceIndex() = default;
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
  constexpr int kRank = int(kMaxRank);
  int32_t in_stride[kRank];
  in_stride[kRank - 1] = 1;
  for (int d = kRank - 2; d >= 0; --d) in_stride[d] = in_stride[d + 1] * p.in_dims[d + 1];
  auto inside = [&](const SourceIndex& s, int d) { return s.index >= 0 && s.index < p.in_dims[d]; };
  const bool unit_step = p.num[kRank - 1] == p.den[kRank - 1];  // source index start + i along the row
  // An odometer over the outer dims; each step writes one row of the innermost dim.
  SourceIndex source[kRank];
  int32_t index[kRank - 1] = {};
  for (int d = 0; d < kRank; ++d) source[d] = SourceIndex(p, d);
  for (;;) {
    bool row_inside = true;
    for (int d = 0; d < kRank - 1 && row_inside; ++d) row_inside = inside(source[d], d);
    const T* row = input;
    for (int d = 0; d < kRank - 1 && row_inside; ++d) row += source[d].index * in_stride[d];
    const int32_t n = p.out_dims[kRank - 1];
    if (unit_step) {  // the row is one run of the input between fills: a block move, not an index per element
      const int32_t first = source[kRank - 1].index;
      const int32_t begin = row_inside ? clamp_i32(-first, 0, n) : n;
      const int32_t end = row_inside ? clamp_i32(p.in_dims[kRank - 1] - first, begin, n) : n;
      for (int32_t i = 0; i < begin; ++i) output[i] = fill;
      for (int32_t i = begin; i < end; ++i) output[i] = row[first + i];  // in place: each element onto itself
      for (int32_t i = end; i < n; ++i) output[i] = fill;
      output += n;
    } else {
      SourceIndex s = source[kRank - 1];
      for (int32_t i = 0; i < n; ++i, s.advance()) *output++ = row_inside && inside(s, kRank - 1) ? row[s.index] : fill;
    }
    int d = kRank - 2;
    for (; d >= 0; --d) {
      source[d].advance();
      if (++index[d] < p.out_dims[d]) break;
      source[d] = SourceIndex(p, d);
      index[d] = 0;
    }
    if (d < 0) return;
  }
}

}  // namespace mcuflow::kernels::detail
