// The MVE kernels' prepared inputs (kernels_mve.h: MveGemmLayout, MveDwLayout, MvePointwiseLayout,
// mve_table_value) computed in MVE lanes, a block of channels a step, the same bytes
// mve_emit_prepared emits: the GEMM tables and pointwise blocks built by the int4-weight kernels in
// their scratch (kernels/mve/mve_blocks.h), and every layout compared by the load-time checks
// (runtime/src/ops/mve/prepared_inputs_check.cpp).
// Device builds only (the host compares with mve_prepared_matches).
#pragma once
#include "mcuflow/kernels/kernels_mve.h"

#if defined(__ARM_FEATURE_MVE)
#include <arm_mve.h>

namespace mcuflow::kernels::mve {

// sum over i < n of row[i], sixteen a step (VADDVA, the tail predicated).
inline int32_t sum_bytes(const int8_t* row, int32_t n) {
  int32_t sum = 0;
  for (int32_t i = 0; i < n; i += kMveChunk) {
    const mve_pred16_t valid = vctp8q(uint32_t(n - i));
    sum = vaddvaq_p_s8(sum, vldrbq_z_s8(row + i, valid), valid);
  }
  return sum;
}

// The four table rows of `block` (padding channels zero), from the weights ([out_c][depth]);
// the weight sums by sum_bytes.
struct GemmBlockTable {
  int32x4_t rows[kMveTableRows];
};
// The rows (mve_table_value) from a block's biases, weight sums, multipliers and shifts.
inline GemmBlockTable block_table_rows(int32x4_t bias, int32x4_t sums, int32x4_t multiplier, int32x4_t shift,
                                       int32_t input_offset) {
  const int32x4_t zero = vdupq_n_s32(0);
  GemmBlockTable t;
  t.rows[kMveBiasFolded] = vmlaq_n_s32(bias, sums, input_offset);
  t.rows[kMveMultiplier] = multiplier;
  t.rows[kMveLeftShift] = vmaxq_s32(shift, zero);
  t.rows[kMveMinusRightShift] = vminq_s32(shift, zero);
  return t;
}
inline GemmBlockTable gemm_block_table(const MveGemmLayout& layout, const MveReferenceInputs& r, int32_t block) {
  const int32_t first = layout.table_channel(block, 0);
  const int32_t left = layout.out_c / layout.groups - block % layout.group_blocks() * kMveGemmBlock;
  const int32_t channels = left < kMveGemmBlock ? left : kMveGemmBlock;
  const mve_pred16_t valid = vctp32q(uint32_t(channels));
  int32_t sums[kMveGemmBlock] = {};
  for (int32_t e = 0; e < channels; ++e) sums[e] = sum_bytes(r.weights + (first + e) * layout.depth, layout.depth);
  const int32x4_t zero = vdupq_n_s32(0);
  const int32x4_t multiplier = r.per_channel_requant ? vldrwq_z_s32(r.multipliers + first, valid)
                                                     : vdupq_m_n_s32(zero, r.multipliers[0], valid);
  const int32x4_t shift =
      r.per_channel_requant ? vldrwq_z_s32(r.shifts + first, valid) : vdupq_m_n_s32(zero, r.shifts[0], valid);
  return block_table_rows(vldrwq_z_s32(r.bias + first, valid), vldrwq_s32(sums), multiplier, shift, r.input_offset);
}

// The channel tables of `layout` at `tables`.
inline void build_gemm_tables(const MveGemmLayout& layout, const MveReferenceInputs& r, int32_t* tables) {
  for (int32_t block = 0; block < layout.blocks(); ++block) {
    const GemmBlockTable t = gemm_block_table(layout, r, block);
    for (int32_t row = 0; row < kMveTableRows; ++row, tables += kMveGemmBlock) vstrwq_s32(tables, t.rows[row]);
  }
}

// Whether `tables` holds exactly the channel tables of `layout`.
inline bool gemm_tables_match(const MveGemmLayout& layout, const MveReferenceInputs& r, const int32_t* tables) {
  for (int32_t block = 0; block < layout.blocks(); ++block) {
    const GemmBlockTable t = gemm_block_table(layout, r, block);
    for (int32_t row = 0; row < kMveTableRows; ++row, tables += kMveGemmBlock) {
      if (vcmpneq_s32(t.rows[row], vldrwq_s32(tables)) != 0) return false;
    }
  }
  return true;
}

// The four table rows of conv_s8_1x1_mve's `block` (a partial block repeats its last channel:
// MvePointwiseLayout::table_channel), from the weights ([out_c][depth]).
inline GemmBlockTable pointwise_block_table(const MvePointwiseLayout& layout, const MveReferenceInputs& r,
                                            int32_t block) {
  int32_t channels[kMveGemmBlock], sums[kMveGemmBlock];
  for (int32_t e = 0; e < kMveGemmBlock; ++e) {
    channels[e] = layout.table_channel(block, e);
    sums[e] = sum_bytes(r.weights + channels[e] * layout.depth, layout.depth);
  }
  const uint32x4_t lanes = vldrwq_u32(reinterpret_cast<const uint32_t*>(channels));
  const int32x4_t multiplier = r.per_channel_requant ? vldrwq_gather_shifted_offset_s32(r.multipliers, lanes)
                                                     : vdupq_n_s32(r.multipliers[0]);
  const int32x4_t shift =
      r.per_channel_requant ? vldrwq_gather_shifted_offset_s32(r.shifts, lanes) : vdupq_n_s32(r.shifts[0]);
  return block_table_rows(vldrwq_gather_shifted_offset_s32(r.bias, lanes), vldrwq_s32(sums), multiplier, shift,
                          r.input_offset);
}

// Chunk `chunk` of channel `e`'s weights in `block` (zero past depth).
inline int8x16_t pointwise_weight_chunk(const MvePointwiseLayout& layout, const MveReferenceInputs& r, int32_t block,
                                        int32_t e, int32_t chunk) {
  const int32_t left = layout.depth - chunk * kMveChunk;
  const int8_t* row = r.weights + layout.table_channel(block, e) * layout.depth;
  return vldrbq_z_s8(row + (left > 0 ? chunk * kMveChunk : 0), vctp8q(uint32_t(left > 0 ? left : 0)));
}

// conv_s8_1x1_mve's prepared input at `out` (the bytes mve_walk_prepared visits).
inline void build_pointwise_blocks(const MvePointwiseLayout& layout, const MveReferenceInputs& r, uint8_t* out) {
  for (int32_t block = 0; block < layout.blocks(); ++block) {
    const GemmBlockTable t = pointwise_block_table(layout, r, block);
    vstrwq_s32(reinterpret_cast<int32_t*>(out), t.rows[kMveBiasFolded]);
    out += kMveGemmBlock * 4;
    for (int32_t chunk = 0; chunk < layout.chunks(); ++chunk) {
      for (int32_t e = 0; e < kMveGemmBlock; ++e, out += kMveChunk)
        vstrbq_s8(reinterpret_cast<int8_t*>(out), pointwise_weight_chunk(layout, r, block, e, chunk));
    }
    for (const int32_t row : MvePointwiseLayout::kRowsAfterWeights) {
      vstrwq_s32(reinterpret_cast<int32_t*>(out), t.rows[row]);
      out += kMveGemmBlock * 4;
    }
  }
}

// Whether `prepared` holds exactly conv_s8_1x1_mve's prepared input.
inline bool pointwise_prepared_match(const MvePointwiseLayout& layout, const MveReferenceInputs& r,
                                     const uint8_t* prepared) {
  for (int32_t block = 0; block < layout.blocks(); ++block) {
    const GemmBlockTable t = pointwise_block_table(layout, r, block);
    if (vcmpneq_s32(t.rows[kMveBiasFolded], vldrwq_s32(reinterpret_cast<const int32_t*>(prepared))) != 0) return false;
    prepared += kMveGemmBlock * 4;
    for (int32_t chunk = 0; chunk < layout.chunks(); ++chunk) {
      for (int32_t e = 0; e < kMveGemmBlock; ++e, prepared += kMveChunk) {
        const int8x16_t held = vldrbq_s8(reinterpret_cast<const int8_t*>(prepared));
        if (vcmpneq_s8(pointwise_weight_chunk(layout, r, block, e, chunk), held) != 0) return false;
      }
    }
    for (const int32_t row : MvePointwiseLayout::kRowsAfterWeights) {
      if (vcmpneq_s32(t.rows[row], vldrwq_s32(reinterpret_cast<const int32_t*>(prepared))) != 0) return false;
      prepared += kMveGemmBlock * 4;
    }
  }
  return true;
}

// Whether `prepared` holds exactly the depthwise layout's prepared input: per block of 16
// channels, each tap's 16 weights compared (zero past the channels, or the channels repeated:
// MveDwLayout::lane_channel) and summed in 16-bit lanes (|sum| <= kMveDwMaxTaps * 128), widened
// in the accumulators' channel order (kMveDwFirstChannel: VMOVLB/T of VMOVLB/T), the table rows
// gathered in that order; then the zero point row.
inline bool dw_prepared_match(const MveDwLayout& layout, const MveReferenceInputs& r, const uint8_t* prepared) {
  const int32x4_t zero = vdupq_n_s32(0);
  // A lane's channel from the block's first: the lane, or the lane modulo a repeated block's channels.
  const bool repeats = layout.repeats_channels();
  const uint8x16_t weight_lanes = vandq_u8(vidupq_n_u8(0, 1), vdupq_n_u8(uint8_t(repeats ? layout.channels - 1 : 0xFF)));
  const uint32x4_t table_mask = vdupq_n_u32(uint32_t(repeats ? layout.channels - 1 : 0xFF));
  for (int32_t block = 0; block < layout.blocks(); ++block, prepared += layout.block_bytes()) {
    const int32_t first = block * kMveDwGroup;
    const int32_t held_channels = repeats ? kMveDwGroup : layout.channels - first;  // lanes holding a channel
    const mve_pred16_t lanes = vctp8q(uint32_t(held_channels));
    int16x8_t even = vdupq_n_s16(0), odd = vdupq_n_s16(0);  // channels 0, 2 ... 14 and 1, 3 ... 15
    const uint8_t* taps = prepared + layout.table_bytes();
    for (int32_t t = 0; t < layout.taps; ++t) {
      const int8x16_t w = vldrbq_gather_offset_z_s8(r.weights + t * layout.channels + first, weight_lanes, lanes);
      if (vcmpneq_s8(w, vldrbq_s8(reinterpret_cast<const int8_t*>(taps + t * kMveDwGroup))) != 0) return false;
      even = vaddq_s16(even, vmovlbq_s8(w));
      odd = vaddq_s16(odd, vmovltq_s8(w));
    }
    const int32x4_t sums[4] = {vmovlbq_s16(even), vmovltq_s16(even), vmovlbq_s16(odd), vmovltq_s16(odd)};
    const auto* table = reinterpret_cast<const int32_t*>(prepared);
    for (int32_t a = 0; a < 4; ++a) {
      const uint32x4_t lane = vidupq_n_u32(uint32_t(kMveDwFirstChannel[a]), 4);  // its lanes in the block
      const uint32x4_t offsets = vandq_u32(lane, table_mask);
      const mve_pred16_t valid = vcmphiq_u32(vdupq_n_u32(uint32_t(held_channels)), lane);
      const int32x4_t bias = vldrwq_gather_shifted_offset_z_s32(r.bias + first, offsets, valid);
      const int32x4_t multiplier =
          r.per_channel_requant ? vldrwq_gather_shifted_offset_z_s32(r.multipliers + first, offsets, valid)
                                : vdupq_m_n_s32(zero, r.multipliers[0], valid);
      const int32x4_t shift = r.per_channel_requant ? vldrwq_gather_shifted_offset_z_s32(r.shifts + first, offsets, valid)
                                                    : vdupq_m_n_s32(zero, r.shifts[0], valid);
      const GemmBlockTable t = block_table_rows(bias, sums[a], multiplier, shift, r.input_offset);
      for (int32_t row = 0; row < kMveTableRows; ++row) {
        if (vcmpneq_s32(t.rows[row], vldrwq_s32(table + row * kMveDwGroup + 4 * a)) != 0) return false;
      }
    }
  }
  const int8x16_t zero_point = vdupq_n_s8(int8_t(-r.input_offset));
  for (int32_t block = 0; block < layout.blocks(); ++block, prepared += kMveDwGroup) {
    if (vcmpneq_s8(zero_point, vldrbq_s8(reinterpret_cast<const int8_t*>(prepared))) != 0) return false;
  }
  return true;
}

}  // namespace mcuflow::kernels::mve

#endif  // __ARM_FEATURE_MVE
