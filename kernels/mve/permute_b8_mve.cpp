// Byte permutation, MVE: the output row by row (permute_walk.h), each row as predicated
// vectors. A row the input holds contiguously is copied by VLDRB/VSTRB, sixteen bytes a step;
// any other is gathered by VLDRB with an offset vector: sixteen 8-bit offsets where the lanes'
// reach fits a byte, else eight 16-bit or four 32-bit ones (VSTRB narrows them back to bytes).
#include <arm_mve.h>

#include "mcuflow/kernels/kernels_mve.h"
#include "mcuflow/kernels/permute_walk.h"

namespace mcuflow::kernels {
namespace {

// Lane type per gather width: offsets, predicate.
template <typename Lane> struct Gather;
template <> struct Gather<uint8_t> {
  static constexpr int32_t kLanes = 16;
  using Vector = uint8x16_t;
  static mve_pred16_t lanes(int32_t left) { return vctp8q(uint32_t(left)); }
};
template <> struct Gather<uint16_t> {
  static constexpr int32_t kLanes = 8;
  using Vector = uint16x8_t;
  static mve_pred16_t lanes(int32_t left) { return vctp16q(uint32_t(left)); }
};
template <> struct Gather<uint32_t> {
  static constexpr int32_t kLanes = 4;
  using Vector = uint32x4_t;
  static mve_pred16_t lanes(int32_t left) { return vctp32q(uint32_t(left)); }
};

template <typename Lane>
void gather_rows(const PermuteWalk& w, const int8_t* input, int8_t* output) {
  using G = Gather<Lane>;
  const PermuteRows r = permute_rows(w, G::kLanes);
  Lane lane_offsets[G::kLanes];
  for (int32_t l = 0; l < G::kLanes; ++l) lane_offsets[l] = Lane(r.offset(l));
  const typename G::Vector offsets = vld1q(lane_offsets);
  for_each_outer_index(w, r.inner, input, [&](const int8_t* row) {
    const auto* from = reinterpret_cast<const uint8_t*>(row);
    auto* to = reinterpret_cast<uint8_t*>(output);
    for (int32_t i = 0; i < r.length; i += G::kLanes, from += r.step, to += G::kLanes) {
      const mve_pred16_t p = G::lanes(r.length - i);
      vstrbq_p(to, vldrbq_gather_offset_z(from, offsets, p), p);
    }
    output += r.length;
  });
}

void copy_rows(const PermuteWalk& w, const int8_t* input, int8_t* output) {
  const PermuteRows r = permute_rows(w, 16);
  for_each_outer_index(w, r.inner, input, [&](const int8_t* row) {
    for (int32_t i = 0; i < r.length; i += 16) {
      const mve_pred16_t p = vctp8q(uint32_t(r.length - i));
      vstrbq_p_s8(output + i, vldrbq_z_s8(row + i, p), p);
    }
    output += r.length;
  });
}

}  // namespace

void permute_b8_mve(const PermuteParams& p, const int8_t* input, int8_t* output) {
  const PermuteWalk w = permute_walk(p);
  if (permute_rows(w, 16).contiguous()) {
    copy_rows(w, input, output);
  } else if (permute_rows(w, 16).largest_offset(16) <= UINT8_MAX) {
    gather_rows<uint8_t>(w, input, output);
  } else if (permute_rows(w, 8).largest_offset(8) <= UINT16_MAX) {
    gather_rows<uint16_t>(w, input, output);
  } else {
    gather_rows<uint32_t>(w, input, output);
  }
}

}  // namespace mcuflow::kernels
