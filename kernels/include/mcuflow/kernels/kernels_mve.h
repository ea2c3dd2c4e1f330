// MVE (Helium, Armv8.1-M) kernels. Each computes bit for bit what its reference kernel
// computes from the same params and leading inputs; the convolution and linear kernels also
// take a constant input the compiler prepared (compiler/src/tiers/mve_rules.cpp) in the
// layouts below, which the kernel adapters (runtime/src/ops/mve/) verify against the reference
// inputs when a program is loaded.
//
// GEMM-shaped kernels (conv_s8_1x1_mve, conv_s8_mve, fc_s8_mve) compute
//   out[row][oc] = requantize(bias'[oc] + sum_k a[row][k] * w[oc][k]),   k < depth,
// where a row is one input pixel (1x1 conv), one im2col window (conv) or one input row (fc),
// and w is the reference weights themselves ([out_c][depth]: OHWI is im2col order).
// bias' = bias + input_offset * sum_k w[oc][k] folds the input offset in; im2col fills
// padding taps with the input zero point so that they contribute nothing. The depthwise kernel
// (dwconv_s8_mve, ch_mult 1) folds its bias over all taps the same way (padding taps read the
// zero point).
//
// The prepared input is a sequence of blocks of channels (four output channels for the GEMM,
// 16 channels for depthwise), each holding:
//   the block's channel table, int32 [4 rows][channels of the block]: bias', multiplier,
//     left shift max(shift, 0), minus right shift min(shift, 0) (padding channels: zero);
//     depthwise lists each row's channels in the kernel's accumulator order;
//   depthwise only, the block's weights, int8 [k_h * k_w taps][16 channels], zero padded.
// Depthwise with 1, 2, 4 or 8 channels: the one block repeats them in every lane (table entries
// and weights), so that one pass computes 16 / channels adjacent pixels (MveDwLayout::lane_channel).
// Depthwise only, after the blocks: a zero point row, int8 [16 * blocks] of the input zero
// point, which padding taps read in place of an input pixel (any channel offset stays inside it).
//
// conv_s8_1x1_mve has a layout of its own (MvePointwiseLayout), which its inner loop walks with a
// single pointer: per block of four output channels, the bias' row, the block's weights chunk by
// chunk (an even number of chunks of 16 inputs, zero past depth: per chunk the four channels' 16
// weights in turn), then the minus right shift, multiplier and left shift rows. A partial last
// block repeats its last channel (table entries and weights), so every lane holds a real channel's
// values; only the real channels are stored.
//
// Each kernel's contract (tier_contract.h): its input slots, scratch size and the params it
// refuses (<kernel>_refusal), with its declaration below.
#pragma once
#include <cmath>
#include <cstdint>
#include <cstring>
#include "mcuflow/kernels/params.h"
#include "mcuflow/kernels/tier_contract.h"
#include "mcuflow/kernels/s16_tiers.h"

namespace mcuflow::kernels {

constexpr int32_t kMveChunk = 16;      // int8 lanes of one MVE vector
constexpr int32_t kMveGemmBlock = 4;   // output channels per GEMM block
constexpr int32_t kMveDwGroup = 16;    // channels per depthwise block
constexpr int32_t kMveTableRows = 4;
constexpr int32_t kMveDwMaxTaps = 64;  // depthwise windows up to k_h * k_w = 64

enum MveTableRow : int32_t { kMveBiasFolded = 0, kMveMultiplier = 1, kMveLeftShift = 2, kMveMinusRightShift = 3 };

// Depthwise accumulator a holds channels kMveDwFirstChannel[a] + 4 * lane of its block (the
// order VMULLB/T then VMOVLB/T produce).
inline constexpr int32_t kMveDwFirstChannel[4] = {0, 2, 1, 3};

// The value of a channel's table row. Wrapping arithmetic: the kernels accumulate modulo 2^32.
constexpr int32_t mve_table_value(int32_t row, int32_t bias, int32_t input_offset, int32_t weight_sum,
                                  int32_t multiplier, int32_t shift) {
  switch (row) {
    case kMveBiasFolded: return int32_t(uint32_t(bias) + uint32_t(input_offset) * uint32_t(weight_sum));
    case kMveMultiplier: return multiplier;
    case kMveLeftShift: return shift > 0 ? shift : 0;
    default: return shift < 0 ? shift : 0;
  }
}

// A grouped conv's GEMM is one per group (out_c / groups channels over its depth of inputs):
// the blocks of group 0, then those of group 1 ...
struct MveGemmLayout {
  int32_t depth, out_c;
  int32_t groups = 1;
  static constexpr int32_t kRowEntries = kMveGemmBlock;

  constexpr int32_t group_blocks() const { return (out_c / groups + kMveGemmBlock - 1) / kMveGemmBlock; }
  constexpr int32_t blocks() const { return groups * group_blocks(); }
  constexpr int32_t table_bytes() const { return kMveTableRows * kRowEntries * 4; }
  constexpr int32_t block_bytes() const { return table_bytes(); }
  constexpr int32_t total_bytes() const { return blocks() * block_bytes(); }
  // The channel of entry e of a block's table rows; -1: padding.
  constexpr int32_t table_channel(int32_t block, int32_t e) const {
    const int32_t group_out = out_c / groups, oc = block % group_blocks() * kMveGemmBlock + e;
    return oc < group_out ? block / group_blocks() * group_out + oc : -1;
  }
  int32_t weight_sum(const int8_t* weights, int32_t oc) const {
    int32_t sum = 0;
    for (int32_t k = 0; k < depth; ++k) sum += weights[oc * depth + k];
    return sum;
  }
  // Nothing: the kernels read the reference weights; nothing after the blocks either.
  template <typename Emit>
  bool emit_weights(int32_t, const int8_t*, Emit&) const {
    return true;
  }
  template <typename Emit>
  bool emit_tail(int32_t, Emit&) const {
    return true;
  }
};

struct MveDwLayout {
  int32_t channels, taps;
  static constexpr int32_t kRowEntries = kMveDwGroup;

  constexpr int32_t blocks() const { return (channels + kMveDwGroup - 1) / kMveDwGroup; }
  constexpr int32_t table_bytes() const { return kMveTableRows * kRowEntries * 4; }
  constexpr int32_t block_bytes() const { return table_bytes() + taps * kMveDwGroup; }
  constexpr int32_t zero_point_row_at() const { return blocks() * block_bytes(); }
  constexpr int32_t total_bytes() const { return zero_point_row_at() + blocks() * kMveDwGroup; }
  // Whether a block holds several pixels: fewer channels than a block that divide it (1, 2, 4,
  // 8), whose one block repeats them in every lane, so that the kernel may compute
  // kMveDwGroup / channels adjacent pixels in one pass.
  constexpr bool repeats_channels() const { return channels < kMveDwGroup && kMveDwGroup % channels == 0; }
  // The channel of lane `lane` of a block; -1: padding (zero).
  constexpr int32_t lane_channel(int32_t block, int32_t lane) const {
    const int32_t c = block * kMveDwGroup + lane;
    return c < channels ? c : repeats_channels() ? lane % channels : -1;
  }
  // Each row lists the four accumulators' lanes in turn.
  constexpr int32_t table_channel(int32_t block, int32_t e) const {
    return lane_channel(block, kMveDwFirstChannel[e / 4] + 4 * (e % 4));
  }
  int32_t weight_sum(const int8_t* weights, int32_t c) const {
    int32_t sum = 0;
    for (int32_t t = 0; t < taps; ++t) sum += weights[t * channels + c];
    return sum;
  }
  // The block's weights in memory order: tap t of channel c = reference weight t * channels + c.
  template <typename Emit>
  bool emit_weights(int32_t block, const int8_t* weights, Emit& emit) const {
    for (int32_t t = 0; t < taps; ++t) {
      for (int32_t lane = 0; lane < kMveDwGroup; ++lane) {
        const int32_t c = lane_channel(block, lane);
        if (!emit(c >= 0 ? uint8_t(weights[t * channels + c]) : uint8_t{0})) return false;
      }
    }
    return true;
  }
  // The zero point row.
  template <typename Emit>
  bool emit_tail(int32_t input_offset, Emit& emit) const {
    for (int32_t i = zero_point_row_at(); i < total_bytes(); ++i) {
      if (!emit(uint8_t(-input_offset))) return false;
    }
    return true;
  }
};

// conv_s8_1x1_mve's prepared input (see the top of this file); the channel tables' values are
// MveGemmLayout's.
struct MvePointwiseLayout {
  int32_t depth, out_c;
  static constexpr int32_t kRowEntries = kMveGemmBlock;
  // The table rows that follow the weights, and their byte offsets from the weights' end.
  static constexpr int32_t kRowsAfterWeights[3] = {kMveMinusRightShift, kMveMultiplier, kMveLeftShift};
  static constexpr int32_t kMinusRightShiftAfter = 0, kMultiplierAfter = 16, kLeftShiftAfter = 32;

  constexpr int32_t chunks() const { return (depth + 2 * kMveChunk - 1) / (2 * kMveChunk) * 2; }
  constexpr int32_t blocks() const { return (out_c + kMveGemmBlock - 1) / kMveGemmBlock; }
  constexpr int32_t weight_bytes() const { return chunks() * kMveChunk * kMveGemmBlock; }
  constexpr int32_t block_bytes() const { return kMveTableRows * kRowEntries * 4 + weight_bytes(); }
  constexpr int32_t total_bytes() const { return blocks() * block_bytes(); }
  constexpr int32_t table_channel(int32_t block, int32_t e) const {
    const int32_t oc = block * kMveGemmBlock + e;
    return oc < out_c ? oc : out_c - 1;
  }
  int32_t weight_sum(const int8_t* weights, int32_t oc) const { return MveGemmLayout{depth, out_c}.weight_sum(weights, oc); }
};

// dwconv_s8_mve sums two taps' products in int16: |x * w| <= 128 * 127 needs no w == -128
// (symmetric quantization never produces it).
inline bool mve_dw_weights_supported(const int8_t* weights, uint32_t count) {
  for (uint32_t i = 0; i < count; ++i) {
    if (weights[i] == -128) return false;
  }
  return true;
}

// The reference inputs the prepared one derives from (requantization per channel or, when
// !per_channel_requant, one multiplier and shift for all channels).
struct MveReferenceInputs {
  const int8_t* weights;
  const int32_t* bias;
  const int32_t* multipliers;
  const int32_t* shifts;
  bool per_channel_requant;
  int32_t input_offset;
};

// Table row `row` of a layout's block: word(value) for each entry, false as soon as it is.
template <typename Layout, typename Word>
bool mve_walk_table_row(const Layout& layout, const MveReferenceInputs& r, int32_t block, int32_t row, Word& word) {
  for (int32_t e = 0; e < Layout::kRowEntries; ++e) {
    const int32_t c = layout.table_channel(block, e);
    int32_t value = 0;
    if (c >= 0) {
      const int32_t q = r.per_channel_requant ? c : 0;
      const int32_t weight_sum = row == kMveBiasFolded ? layout.weight_sum(r.weights, c) : 0;
      value = mve_table_value(row, r.bias[c], r.input_offset, weight_sum, r.multipliers[q], r.shifts[q]);
    }
    if (!word(uint32_t(value))) return false;
  }
  return true;
}

// The prepared input of a layout (MveGemmLayout, MveDwLayout, MvePointwiseLayout) in memory
// order: word(value) for each table entry (four bytes, little-endian), byte(value) for each other
// byte, stopping with false as soon as either returns false. The compiler builds the input with
// it (mve_emit_prepared), the device verifier compares against it (mve_prepared_matches).
template <typename Layout, typename Word, typename Byte>
bool mve_walk_prepared(const Layout& layout, const MveReferenceInputs& r, Word word, Byte byte) {
  for (int32_t block = 0; block < layout.blocks(); ++block) {
    for (int32_t row = 0; row < kMveTableRows; ++row) {
      if (!mve_walk_table_row(layout, r, block, row, word)) return false;
    }
    if (!layout.emit_weights(block, r.weights, byte)) return false;
  }
  return layout.emit_tail(r.input_offset, byte);
}

// conv_s8_1x1_mve's layout: the bias' row, the block's weights chunk by chunk, the other rows.
template <typename Word, typename Byte>
bool mve_walk_prepared(const MvePointwiseLayout& layout, const MveReferenceInputs& r, Word word, Byte byte) {
  for (int32_t block = 0; block < layout.blocks(); ++block) {
    if (!mve_walk_table_row(layout, r, block, kMveBiasFolded, word)) return false;
    for (int32_t chunk = 0; chunk < layout.chunks(); ++chunk) {
      for (int32_t e = 0; e < kMveGemmBlock; ++e) {
        const int8_t* row = r.weights + layout.table_channel(block, e) * layout.depth;
        for (int32_t k = chunk * kMveChunk; k < (chunk + 1) * kMveChunk; ++k) {
          if (!byte(k < layout.depth ? uint8_t(row[k]) : uint8_t{0})) return false;
        }
      }
    }
    for (const int32_t row : MvePointwiseLayout::kRowsAfterWeights) {
      if (!mve_walk_table_row(layout, r, block, row, word)) return false;
    }
  }
  return true;
}

// The prepared input byte by byte: emit(byte).
template <typename Layout, typename Emit>
bool mve_emit_prepared(const Layout& layout, const MveReferenceInputs& r, Emit emit) {
  const auto word = [&emit](uint32_t value) {
    for (int32_t byte = 0; byte < 4; ++byte) {
      if (!emit(uint8_t(value >> (8 * byte)))) return false;
    }
    return true;
  };
  return mve_walk_prepared(layout, r, word, emit);
}

// Whether `prepared` (layout.total_bytes() bytes) is the prepared input, a table entry a word:
// the host's check (a board's compares in MVE lanes: mve_prepared.h).
template <typename Layout>
bool mve_prepared_matches(const Layout& layout, const MveReferenceInputs& r, const uint8_t* prepared) {
  const auto word = [&prepared](uint32_t value) {
    uint32_t held;  // little-endian, like every integer the runtime reads in place
    std::memcpy(&held, prepared, 4);
    prepared += 4;
    return held == value;
  };
  return mve_walk_prepared(layout, r, word, [&prepared](uint8_t byte) { return *prepared++ == byte; });
}

// Two activation rows interleaved for the GEMM (mve::interleave_rows): whole chunks of 16 each.
constexpr int32_t mve_pair_bytes(int32_t depth) { return 2 * kMveChunk * ((depth + kMveChunk - 1) / kMveChunk); }
// conv_s8_1x1_mve's pair: as many chunks as its weights have.
constexpr int32_t mve_pointwise_pair_bytes(int32_t depth) { return 2 * kMveChunk * MvePointwiseLayout{depth, 0}.chunks(); }
// conv_s8_mve's GEMM: a group's window (k_h * k_w * in_c / groups) per output channel.
constexpr MveGemmLayout mve_conv_gemm_layout(const ConvParams& p) {
  return {p.k_h * p.k_w * (p.in_c / p.groups), p.out_c, p.groups};
}
// conv_s8_mve's scratch: two im2col rows (every group's window, group after group), then the
// interleaved pair of one group's windows.
constexpr int32_t mve_conv_scratch_bytes(const ConvParams& p) {
  return 2 * p.k_h * p.k_w * p.in_c + mve_pair_bytes(mve_conv_gemm_layout(p).depth);
}

// weights: the reference weights; prepared: the layout above (16-byte aligned, like every
// constant); scratch: arena of mve_pair_bytes(in_c) bytes (conv_s8_1x1_mve:
// mve_pointwise_pair_bytes; conv_s8_mve: mve_conv_scratch_bytes; fc_s8_mve: needed only for
// more than one row). Inputs: the reference's, the prepared input, then the scratch
// (dwconv_s8_mve, which reads its weights from the prepared input, has none; conv_s8_1x1_mve
// reads its weights from the prepared input too).
constexpr uint8_t kMvePreparedSlot = kWeightedSlots, kMveScratchSlot = kMvePreparedSlot + 1;
// conv_s8_mve's deepest window: its scratch, planned as two rows, fits the limit per dimension.
constexpr int32_t kMveMaxDepth = kMaxDim / 2;
// conv_s8_1x1_mve stores a pixel pair's outputs by one scatter of 16-bit offsets (out_c + 3 at most).
constexpr int32_t kMvePointwiseMaxOutC = 65532;
inline Refusal conv_s8_1x1_mve_refusal(const ConvParams& p) {
  const Refusal r = pointwise_refusal(p);
  return r != Refusal::kNone ? r : (p.out_c > kMvePointwiseMaxOutC ? Refusal::kOutputChannels : Refusal::kNone);
}
inline Refusal conv_s8_mve_refusal(const ConvParams& p) {
  return int64_t(p.k_h) * p.k_w * p.in_c > kMveMaxDepth ? Refusal::kWindowDepth : Refusal::kNone;
}
inline Refusal dwconv_s8_mve_refusal(const DwConvParams& p) {
  if (p.ch_mult != 1) return Refusal::kChannelMultiplier;
  return int64_t(p.k_h) * p.k_w > kMveDwMaxTaps ? Refusal::kTaps : Refusal::kNone;
}
void conv_s8_1x1_mve(const ConvParams& p, const int8_t* input, const uint8_t* prepared, int8_t* scratch,
                     int8_t* output);
void conv_s8_mve(const ConvParams& p, const int8_t* input, const int8_t* weights, const uint8_t* prepared,
                 int8_t* scratch, int8_t* output);
void fc_s8_mve(const FcParams& p, const int8_t* input, const int8_t* weights, const uint8_t* prepared, int8_t* scratch,
               int8_t* output);
void dwconv_s8_mve(const DwConvParams& p, const int8_t* input, const uint8_t* prepared, int8_t* output);
// Packed int4 weights (W4A8): conv_s8_w4_1x1_mve, conv_s8_w4_mve, dwconv_s8_w4_mve and
// fc_s8_w4_mve take the w4 reference's inputs, then an arena scratch (kMveW4ScratchSlot) in which
// each call builds what the compiler prepares for its int8 kernel (conv_s8_1x1_mve, conv_s8_mve,
// dwconv_s8_mve, fc_s8_mve) from the weights unpacked (int4_weights.h) at its front: the GEMM
// kernels' channel tables, the depthwise kernel's whole prepared input; then it runs that kernel,
// the GEMM kernels' own scratch after the rest; fc_s8_w4_mve per block of output channels
// (mve_fc_w4_block; a linear layer never runs in place, so the order of its outputs is free). Nothing is prepared at compile time (the constants stay
// the packed weights and the reference's tables), and the int8 kernels walk as before, so each
// keeps its int8 kernel's aliasing contract. Refusals: the int8 kernel's, and w4_weights_refusal
// where the whole weight tensor is unpacked.
constexpr uint8_t kMveW4ScratchSlot = kWeightedSlots;
// The GEMM kernels' scratch: unpacked weights, the prepared input (channel tables; the 1x1
// conv's whole layout), the int8 kernel's scratch.
template <typename Layout>
constexpr int32_t mve_w4_gemm_scratch_bytes(const Layout& layout, int32_t int8_scratch_bytes) {
  return w4_unpacked_bytes(layout.depth * layout.out_c) + layout.total_bytes() + ((int8_scratch_bytes + 15) & ~15);
}
constexpr int32_t mve_conv_w4_1x1_scratch_bytes(const ConvParams& p) {
  return mve_w4_gemm_scratch_bytes(MvePointwiseLayout{p.in_c, p.out_c}, mve_pointwise_pair_bytes(p.in_c));
}
constexpr int32_t mve_conv_w4_scratch_bytes(const ConvParams& p) {
  return mve_w4_gemm_scratch_bytes(mve_conv_gemm_layout(p), mve_conv_scratch_bytes(p));
}
// fc_s8_w4_mve builds a block of output channels at a time: as many as kMveW4FcBlockBytes of
// weights hold (whole GEMM blocks, at least one, at most out_c rounded up to one).
constexpr int32_t kMveW4FcBlockBytes = 4096;
constexpr int32_t mve_fc_w4_block(const FcParams& p) {
  const int32_t all = (p.out_c + kMveGemmBlock - 1) / kMveGemmBlock * kMveGemmBlock;
  const int32_t fit = kMveW4FcBlockBytes / p.in_c / kMveGemmBlock * kMveGemmBlock;
  return all <= fit ? all : (fit > kMveGemmBlock ? fit : kMveGemmBlock);
}
constexpr int32_t mve_fc_w4_scratch_bytes(const FcParams& p) {
  return mve_w4_gemm_scratch_bytes(MveGemmLayout{p.in_c, mve_fc_w4_block(p)}, p.rows > 1 ? mve_pair_bytes(p.in_c) : 0);
}
// The depthwise kernel's: unpacked weights, the prepared input.
constexpr int32_t mve_dw_w4_scratch_bytes(const DwConvParams& p) {
  return w4_unpacked_bytes(p.out_c * p.k_h * p.k_w) + MveDwLayout{p.in_c, p.k_h * p.k_w}.total_bytes();
}
inline Refusal conv_s8_w4_1x1_mve_refusal(const ConvParams& p) {
  const Refusal r = conv_s8_1x1_mve_refusal(p);
  return r != Refusal::kNone ? r : w4_weights_refusal(int64_t(p.out_c) * p.in_c);
}
inline Refusal conv_s8_w4_mve_refusal(const ConvParams& p) {
  const Refusal r = conv_s8_mve_refusal(p);
  return r != Refusal::kNone ? r : w4_weights_refusal(int64_t(p.out_c) * mve_conv_gemm_layout(p).depth);
}
inline Refusal dwconv_s8_w4_mve_refusal(const DwConvParams& p) {
  const Refusal r = dwconv_s8_mve_refusal(p);
  return r != Refusal::kNone ? r : w4_weights_refusal(int64_t(p.out_c) * p.k_h * p.k_w);
}
inline Refusal fc_s8_w4_mve_refusal(const FcParams&) { return Refusal::kNone; }  // a block at a time
void conv_s8_w4_1x1_mve(const ConvParams& p, const int8_t* input, const uint8_t* weights, const int32_t* bias,
                        const int32_t* multipliers, const int32_t* shifts, int8_t* scratch, int8_t* output);
void conv_s8_w4_mve(const ConvParams& p, const int8_t* input, const uint8_t* weights, const int32_t* bias,
                    const int32_t* multipliers, const int32_t* shifts, int8_t* scratch, int8_t* output);
void dwconv_s8_w4_mve(const DwConvParams& p, const int8_t* input, const uint8_t* weights, const int32_t* bias,
                      const int32_t* multipliers, const int32_t* shifts, int8_t* scratch, int8_t* output);
void fc_s8_w4_mve(const FcParams& p, const int8_t* input, const uint8_t* weights, const int32_t* bias,
                  const int32_t* multipliers, const int32_t* shifts, int8_t* scratch, int8_t* output);
// int16 activations (A16W8): the reference kernels' inputs (conv_s16, dwconv_s16, fc_s16), nothing
// prepared; each call checks its weights once for the int32 path (s16_tiers.h).
// conv_s16_mve gathers a window on the stack: at most kMveS16ConvMaxDepth taps x channels.
constexpr int32_t kMveS16ConvMaxDepth = 512;
inline Refusal conv_s16_1x1_mve_refusal(const ConvParams& p) { return pointwise_refusal(p); }
inline Refusal conv_s16_mve_refusal(const ConvParams& p) {
  if (p.groups != 1) return Refusal::kGroups;
  return int64_t(p.k_h) * p.k_w * p.in_c > kMveS16ConvMaxDepth ? Refusal::kWindowDepth : Refusal::kNone;
}
// dwconv_s16_mve lists a pixel's valid taps on the stack: at most kMveDwMaxTaps.
inline Refusal dwconv_s16_mve_refusal(const DwConvParams& p) {
  if (p.ch_mult != 1) return Refusal::kChannelMultiplier;
  return int64_t(p.k_h) * p.k_w > kMveDwMaxTaps ? Refusal::kTaps : Refusal::kNone;
}
void conv_s16_1x1_mve(const ConvParams& p, const int16_t* input, const int8_t* weights, const int64_t* bias,
                      const int32_t* multipliers, const int32_t* shifts, int16_t* output);
void conv_s16_mve(const ConvParams& p, const int16_t* input, const int8_t* weights, const int64_t* bias,
                  const int32_t* multipliers, const int32_t* shifts, int16_t* output);
void dwconv_s16_mve(const DwConvParams& p, const int16_t* input, const int8_t* weights, const int64_t* bias,
                    const int32_t* multipliers, const int32_t* shifts, int16_t* output);
void fc_s16_mve(const FcParams& p, const int16_t* input, const int8_t* weights, const int64_t* bias,
                const int32_t* multipliers, const int32_t* shifts, int16_t* output);
// avgpool_s16_mve sums a window in int32 lanes (s16_tiers.h).
inline Refusal avgpool_s16_mve_refusal(const PoolParams& p) { return s16_pool_window_refusal(p); }
void avgpool_s16_mve(const PoolParams& p, const int16_t* input, int16_t* output);
// Same inputs as their reference kernels (nothing prepared).
void add_s8_mve(const BinaryParams& p, const int8_t* input1, const int8_t* input2, int8_t* output);
void mul_s8_mve(const BinaryParams& p, const int8_t* input1, const int8_t* input2, int8_t* output);
void clamp_s8_mve(const ClampParams& p, const int8_t* input, int8_t* output);
// table: the constant int8 [kByteValues] requantize_table_entry (elementwise_tiers.h), gathered
// sixteen lanes at a time.
void requantize_s8_mve(const RequantizeParams& p, const int8_t* input, const int8_t* table, int8_t* output);
// The reference's inputs (its 256-entry table, entry b + 128 for input b), gathered likewise.
void lut_s8_mve(const LutParams& p, const int8_t* input, const int8_t* table, int8_t* output);
void avgpool_s8_mve(const PoolParams& p, const int8_t* input, int8_t* output);
void maxpool_s8_mve(const PoolParams& p, const int8_t* input, int8_t* output);
// Sum and mean (reduce_sum_refusal, tier_contract.h): the reference's input; never in place.
void reduce_s8_mve(const ReduceParams& p, const int8_t* input, int8_t* output);

// Softmax: the reference's input, then the exp table (constant int32 [kSoftmaxTableEntries],
// softmax_exp_table_entry, softmax_table.h). Each element is read before it is written.
void softmax_s8_mve(const SoftmaxParams& p, const int8_t* input, const int32_t* exp_table, int8_t* output);
// Quantization at a program's inputs and outputs: the reference's inputs; dequantize_s8_f32_mve
// needs a normal, finite scale (MVE float arithmetic flushes denormals to zero).
void quantize_f32_s8_mve(const QuantizeParams& p, const float* input, int8_t* output);
void dequantize_s8_f32_mve(const QuantizeParams& p, const int8_t* input, float* output);
inline Refusal dequantize_s8_f32_mve_refusal(const QuantizeParams& p) {
  return std::isnormal(p.scale) ? Refusal::kNone : Refusal::kScale;
}

// Float32 convolution, depthwise convolution and linear layers: their references' params and
// inputs (weights and bias may be any tensors), four output channels per MVE vector. Bit for bit
// their references: where the operands' magnitudes let MVE's flush-to-zero of denormals (or an
// overflow) change a result, the kernel runs its reference instead (kernels/mve/f32_mve_blocks.h,
// docs/kernels_float.md).
void conv_f32_mve(const ConvParams& p, const float* input, const float* weights, const float* bias, float* output);
void dwconv_f32_mve(const DwConvParams& p, const float* input, const float* weights, const float* bias, float* output);
void fc_f32_mve(const FcParams& p, const float* input, const float* weights, const float* bias, float* output);
// conv_f32_mve takes one group (ungrouped_refusal), dwconv_f32_mve channel multiplier 1
// (unit_multiplier_refusal), fc_f32_mve any layer.

// --- cat slice and strided copy: the references' params and inputs; in place as they are ---
// concat_slice_s8: a slice that requantizes also takes its table (input kRequantizeTableSlot,
// constant int8 [kByteValues], concat_requantize_table_entry, elementwise_tiers.h); a plain copy
// takes nothing more (table null). strided_copy_b8: nothing prepared; rows of unit step move as
// blocks, other rows element by element as the reference does. Each block is read before it is
// written, so a copy onto its own source (the planner's in-place slices) stays correct.
void concat_slice_s8_mve(const ConcatSliceParams& p, const int8_t* input, const int8_t* table, int8_t* output);
void strided_copy_b8_mve(const StridedCopyParams& p, const int8_t* input, int8_t* output);
// int16 table activations and softmax: the reference's inputs (the compiler's 513-entry tables,
// lut_s16.h, softmax_s16.h) and check, nothing prepared; four lanes per step, both neighbouring entries gathered.
void lut_s16_mve(const LutParams& p, const int16_t* input, const int16_t* table, int16_t* output);
void softmax_s16_mve(const SoftmaxS16Params& p, const int16_t* input, const int16_t* exp_table, int16_t* output);
// permute_b8_mve: the reference's inputs, any permutation (permute_walk.h).
void permute_b8_mve(const PermuteParams& p, const int8_t* input, int8_t* output);

}  // namespace mcuflow::kernels
