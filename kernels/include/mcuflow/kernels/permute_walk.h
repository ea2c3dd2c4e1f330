// The loop structure of a permute_b8 (params.h PermuteParams), shared by its tier kernels: the
// output's dims in order with the input stride of each, dims of 1 dropped and a dim merged
// into the one outside it wherever the input keeps them contiguous (the reference's odometer
// walks every dim of 1 and every split of a run). Computed per call: a few dozen operations.
#pragma once
#include <cstdint>
#include <cstring>

#include "mcuflow/kernels/params.h"

namespace mcuflow::kernels {

struct PermuteWalk {
  int32_t rank = 0;             // dims left (0: a single element)
  int32_t dim[kMaxRank] = {};   // output order, outermost first, none of size 1
  int32_t stride[kMaxRank] = {};  // input elements per step of each dim
};

inline PermuteWalk permute_walk(const PermuteParams& p) {
  int32_t in_stride[kMaxRank];
  in_stride[kMaxRank - 1] = 1;
  for (int k = int(kMaxRank) - 2; k >= 0; --k) in_stride[k] = in_stride[k + 1] * p.in_dims[k + 1];
  PermuteWalk w;
  for (uint32_t k = 0; k < kMaxRank; ++k) {
    const int32_t dim = p.in_dims[p.perm[k]], stride = in_stride[p.perm[k]];
    if (dim == 1) continue;
    if (w.rank > 0 && w.stride[w.rank - 1] == stride * dim) {  // continues the dim outside it
      w.dim[w.rank - 1] *= dim;
      w.stride[w.rank - 1] = stride;
      continue;
    }
    w.dim[w.rank] = dim;
    w.stride[w.rank] = stride;
    ++w.rank;
  }
  return w;
}

// Calls row(input + offset) for each index of the walk's dims outside its innermost `inner`
// ones, in output order (an odometer): the caller copies that block of the output.
template <typename Row>
inline void for_each_outer_index(const PermuteWalk& w, int32_t inner, const int8_t* input, Row&& row) {
  const int32_t outer = w.rank - inner;
  int32_t index[kMaxRank] = {};
  for (;;) {
    row(input);
    int32_t k = outer - 1;
    for (; k >= 0; --k) {
      input += w.stride[k];
      if (++index[k] < w.dim[k]) break;
      input -= w.stride[k] * w.dim[k];
      index[k] = 0;
    }
    if (k < 0) return;
  }
}

// The output as rows of `lanes`-element vectors (a tier kernel's gather width): a row covers
// the walk's innermost dim, or its two innermost when the innermost is shorter than a vector
// and divides it (a channel shuffle's pairs: whole vectors instead of a row per pair). Lane l
// of a row's vector v reads input element v * step + (l % minor) * minor_stride +
// (l / minor) * major_stride from the row's start.
struct PermuteRows {
  int32_t inner = 0;   // walk dims a row covers (for_each_outer_index's `inner`)
  int32_t length = 1;  // elements per row
  int32_t minor = 1, minor_stride = 0, major_stride = 0;
  int32_t step = 0;

  int32_t offset(int32_t lane) const { return (lane % minor) * minor_stride + (lane / minor) * major_stride; }
  // The largest offset the lanes of a vector read (those past a short row's end included).
  int64_t largest_offset(int32_t lanes) const {
    return int64_t(minor - 1) * minor_stride + int64_t(lanes / minor - 1) * major_stride;
  }
  bool contiguous() const { return inner == 1 && minor_stride == 1; }
};

inline PermuteRows permute_rows(const PermuteWalk& w, int32_t lanes) {
  PermuteRows r;
  if (w.rank == 0) return r;
  const int32_t dim = w.dim[w.rank - 1], stride = w.stride[w.rank - 1];
  r.minor_stride = stride;
  if (w.rank >= 2 && dim < lanes && lanes % dim == 0) {
    r.inner = 2;
    r.length = dim * w.dim[w.rank - 2];
    r.minor = dim;
    r.major_stride = w.stride[w.rank - 2];
    r.step = lanes / dim * r.major_stride;
  } else {
    r.inner = 1;
    r.length = dim;
    r.minor = lanes;
    r.step = lanes * stride;
  }
  return r;
}

// The scalar and DSP kernels (permute_b8_scalar, permute_b8_dsp): rows the input holds
// contiguously move a word at a time (any alignment where the core allows unaligned words,
// Armv7-M; else where both ends are word aligned), other rows four gathered bytes a step
// (four offsets in registers, one pointer bump).
template <bool kUnalignedWords>
inline void permute_rows_by_words(const PermuteParams& p, const int8_t* input, int8_t* output) {
  const PermuteWalk w = permute_walk(p);
  const PermuteRows r = permute_rows(w, 4);
  if (r.contiguous()) {
    for_each_outer_index(w, r.inner, input, [&](const int8_t* from) {
      int32_t n = r.length;
      if (kUnalignedWords || ((uintptr_t(from) | uintptr_t(output)) & 3) == 0) {
        for (; n >= 4; n -= 4, from += 4, output += 4) {
          uint32_t word;
          std::memcpy(&word, kUnalignedWords ? from : static_cast<const int8_t*>(__builtin_assume_aligned(from, 4)), 4);
          std::memcpy(kUnalignedWords ? output : static_cast<int8_t*>(__builtin_assume_aligned(output, 4)), &word, 4);
        }
      }
      for (; n > 0; --n) *output++ = *from++;
    });
    return;
  }
  const int32_t o1 = r.offset(1), o2 = r.offset(2), o3 = r.offset(3);
  for_each_outer_index(w, r.inner, input, [&](const int8_t* from) {
    int32_t i = 0;
    for (; i + 4 <= r.length; i += 4, from += r.step, output += 4) {
      output[0] = from[0];
      output[1] = from[o1];
      output[2] = from[o2];
      output[3] = from[o3];
    }
    for (int32_t lane = 0; i < r.length; ++i, ++lane) *output++ = from[r.offset(lane)];
  });
}

}  // namespace mcuflow::kernels
