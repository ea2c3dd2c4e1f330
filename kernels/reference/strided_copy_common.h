// Shared loop of strided_copy_b8 / strided_copy_b32 and the strided_copy_b8 tier kernels: walks
// the output in order and keeps, per dim, the source index floor(o * num / den) as a quotient and
// remainder that advance by num / den per step, so the loop itself never divides. A row whose
// source advances one element per element (slices, pads, concatenations: num == den) is moved as
// one block between fills, by the Moves a tier passes (ElementMoves for the references).
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

// A unit-step row's runs, element by element. In place (output onto its source) each element
// lands on itself.
struct ElementMoves {
  template <typename T>
  static void copy(const T* from, T* to, int32_t n) {
    for (int32_t i = 0; i < n; ++i) to[i] = from[i];
  }
  template <typename T>
  static void fill(T* to, int32_t n, T value) {
    for (int32_t i = 0; i < n; ++i) to[i] = value;
  }
};

template <typename T, typename Moves = ElementMoves>
void strided_copy(const StridedCopyParams& p, const T* input, T* output, T fill) {
  constexpr int kRank = int(kMaxRank);
  int32_t in_stride[kRank];
  in_stride[kRank - 1] = 1;
  for (int d = kRank - 2; d >= 0; --d) in_stride[d] = in_stride[d + 1] * p.in_dims[d + 1];
  auto inside = [&](const SourceIndex& s, int d) { return s.index >= 0 && s.index < p.in_dims[d]; };
  const bool unit_step = p.num[kRank - 1] == p.den[kRank - 1];  // source index start + i along the row
  const int32_t n = p.out_dims[kRank - 1];
  // One output row from input row `row` (null: the row lies outside the input, all fill).
  auto write_row = [&](const T* row, T* out) {
    if (unit_step) {  // one run of the input between fills: a block move, not an index per element
      const int32_t first = p.start[kRank - 1];
      const int32_t begin = row != nullptr ? clamp_i32(-first, 0, n) : n;
      const int32_t end = row != nullptr ? clamp_i32(p.in_dims[kRank - 1] - first, begin, n) : n;
      if (begin > 0) Moves::fill(out, begin, fill);
      if (end > begin) Moves::copy(row + first + begin, out + begin, end - begin);
      if (n > end) Moves::fill(out + end, n - end, fill);
    } else {
      SourceIndex s(p, kRank - 1);
      for (int32_t i = 0; i < n; ++i, s.advance()) out[i] = row != nullptr && inside(s, kRank - 1) ? row[s.index] : fill;
    }
  };
  // Every dim before the last whole and in order (a slice or pad of the last dim alone): rows
  // follow each other in both tensors, no odometer.
  bool whole_rows = true;
  int32_t rows = 1;
  for (int d = 0; d < kRank - 1; ++d) {
    whole_rows = whole_rows && p.start[d] == 0 && p.num[d] == p.den[d] && p.out_dims[d] == p.in_dims[d];
    rows *= p.out_dims[d];
  }
  if (whole_rows) {
    for (int32_t r = 0; r < rows; ++r) write_row(input + r * in_stride[kRank - 2], output + r * n);
    return;
  }
  // An odometer over the outer dims; each step writes one row of the innermost dim.
  SourceIndex source[kRank];
  int32_t index[kRank - 1] = {};
  for (int d = 0; d < kRank; ++d) source[d] = SourceIndex(p, d);
  for (;;) {
    bool row_inside = true;
    for (int d = 0; d < kRank - 1 && row_inside; ++d) row_inside = inside(source[d], d);
    const T* row = input;
    for (int d = 0; d < kRank - 1 && row_inside; ++d) row += source[d].index * in_stride[d];
    write_row(row_inside ? row : nullptr, output);
    output += n;
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
