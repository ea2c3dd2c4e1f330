// MVE (Helium, Armv8.1-M) kernels. Each computes bit for bit what its reference kernel
// computes from the same params and leading inputs, using one more constant input the compiler
// prepared (compiler/src/tiers/mve_rules.cpp) in the layouts below; the kernel adapters
// (runtime/src/ops/mve/) verify it against the reference inputs when a program is loaded.
//
// GEMM-shaped kernels (conv_s8_1x1_mve, conv_s8_mve, fc_s8_mve) compute
//   out[row][oc] = requantize(bias'[oc] + sum_k a[row][k] * w[oc][k]),   k < depth,
// where a row is one input pixel (1x1 conv), one im2col window (conv) or one input row (fc).
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
//   the block's weights, int8: GEMM [chunks of 16 along k][4 channels][16],
//     depthwise [k_h * k_w taps][16 channels]; zero padded.
#pragma once
#include <cstdint>
#include "mcuflow/kernels/params.h"

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

struct MveGemmLayout {
  int32_t depth, out_c;
  static constexpr int32_t kRowEntries = kMveGemmBlock;

  constexpr int32_t chunks() const { return (depth + kMveChunk - 1) / kMveChunk; }
  constexpr int32_t blocks() const { return (out_c + kMveGemmBlock - 1) / kMveGemmBlock; }
  constexpr int32_t table_bytes() const { return kMveTableRows * kRowEntries * 4; }
  constexpr int32_t block_bytes() const { return table_bytes() + chunks() * kMveGemmBlock * kMveChunk; }
  // The channel of entry e of a block's table rows; -1: padding.
  constexpr int32_t table_channel(int32_t block, int32_t e) const {
    const int32_t oc = block * kMveGemmBlock + e;
    return oc < out_c ? oc : -1;
  }
  int32_t weight_sum(const int8_t* weights, int32_t oc) const {
    int32_t sum = 0;
    for (int32_t k = 0; k < depth; ++k) sum += weights[oc * depth + k];
    return sum;
  }
  // The block's weights in memory order, w[oc][k] = reference weight oc * depth + k.
  template <typename Emit>
  bool emit_weights(int32_t block, const int8_t* weights, Emit& emit) const {
    for (int32_t chunk = 0; chunk < chunks(); ++chunk) {
      for (int32_t oc = block * kMveGemmBlock; oc < (block + 1) * kMveGemmBlock; ++oc) {
        for (int32_t k = chunk * kMveChunk; k < (chunk + 1) * kMveChunk; ++k) {
          if (!emit(oc < out_c && k < depth ? uint8_t(weights[oc * depth + k]) : uint8_t{0})) return false;
        }
      }
    }
    return true;
  }
};

struct MveDwLayout {
  int32_t channels, taps;
  static constexpr int32_t kRowEntries = kMveDwGroup;

  constexpr int32_t blocks() const { return (channels + kMveDwGroup - 1) / kMveDwGroup; }
  constexpr int32_t table_bytes() const { return kMveTableRows * kRowEntries * 4; }
  constexpr int32_t block_bytes() const { return table_bytes() + taps * kMveDwGroup; }
  // Each row lists the four accumulators' lanes in turn.
  constexpr int32_t table_channel(int32_t block, int32_t e) const {
    const int32_t c = block * kMveDwGroup + kMveDwFirstChannel[e / 4] + 4 * (e % 4);
    return c < channels ? c : -1;
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
      for (int32_t c = block * kMveDwGroup; c < (block + 1) * kMveDwGroup; ++c) {
        if (!emit(c < channels ? uint8_t(weights[t * channels + c]) : uint8_t{0})) return false;
      }
    }
    return true;
  }
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

// The prepared input of a layout (MveGemmLayout, MveDwLayout) in memory order: emit(byte) for
// each byte (tables little-endian), stopping with false as soon as emit returns false. The
// compiler builds the input with it, the device verifier compares against it.
template <typename Layout, typename Emit>
bool mve_emit_prepared(const Layout& layout, const MveReferenceInputs& r, Emit emit) {
  for (int32_t block = 0; block < layout.blocks(); ++block) {
    for (int32_t row = 0; row < kMveTableRows; ++row) {
      for (int32_t e = 0; e < Layout::kRowEntries; ++e) {
        const int32_t c = layout.table_channel(block, e);
        int32_t value = 0;
        if (c >= 0) {
          const int32_t q = r.per_channel_requant ? c : 0;
          const int32_t weight_sum = row == kMveBiasFolded ? layout.weight_sum(r.weights, c) : 0;
          value = mve_table_value(row, r.bias[c], r.input_offset, weight_sum, r.multipliers[q], r.shifts[q]);
        }
        for (int32_t byte = 0; byte < 4; ++byte) {
          if (!emit(uint8_t(uint32_t(value) >> (8 * byte)))) return false;
        }
      }
    }
    if (!layout.emit_weights(block, r.weights, emit)) return false;
  }
  return true;
}

// prepared: the layout above (16-byte aligned, like every constant).
void conv_s8_1x1_mve(const ConvParams& p, const int8_t* input, const uint8_t* prepared, int8_t* output);
// scratch: 2 * k_h * k_w * in_c bytes of arena for two im2col rows.
void conv_s8_mve(const ConvParams& p, const int8_t* input, const uint8_t* prepared, int8_t* scratch, int8_t* output);
void fc_s8_mve(const FcParams& p, const int8_t* input, const uint8_t* prepared, int8_t* output);
void dwconv_s8_mve(const DwConvParams& p, const int8_t* input, const uint8_t* prepared, int8_t* output);
// Same inputs as their reference kernels (nothing prepared).
void add_s8_mve(const BinaryParams& p, const int8_t* input1, const int8_t* input2, int8_t* output);
void avgpool_s8_mve(const PoolParams& p, const int8_t* input, int8_t* output);

}  // namespace mcuflow::kernels

#if defined(__ARM_FEATURE_MVE)
#include <arm_mve.h>

// Building blocks shared by the MVE kernels (inline: each kernel is its own translation unit).
namespace mcuflow::kernels::mve {

// The reference requantization (arith.h multiply_by_quantized_multiplier, then output offset
// and clamp) of four lanes, whose multipliers, left shifts and minus right shifts are at byte
// offsets kMultiplierAt, kLeftShiftAt and kMinusRightShiftAt of `table`. VQRDMULH rounds
// exactly like sat_rounding_doubling_high_mul (half up, saturating INT32_MIN^2). VRSHL rounds
// half up too, so negative values are first stepped down by one (saturating) wherever a right
// shift happens: that makes ties go away from zero. In assembly so that the compiler keeps the
// steps of several accumulators apart instead of interleaving them into spills.
template <int32_t kMultiplierAt, int32_t kLeftShiftAt, int32_t kMinusRightShiftAt>
inline int32x4_t requantize(int32x4_t acc, const int32_t* table, int32_t output_offset, int32x4_t act_min,
                            int32x4_t act_max) {
  constexpr int32_t kEnd = (kMultiplierAt > kLeftShiftAt ? (kMultiplierAt > kMinusRightShiftAt ? kMultiplierAt : kMinusRightShiftAt)
                                                         : (kLeftShiftAt > kMinusRightShiftAt ? kLeftShiftAt : kMinusRightShiftAt)) + 16;
  int32x4_t row, fixup;
  asm("vldrw.32 %q[row], [%[table], %[left]]\n\t"
      "vshl.s32 %q[acc], %q[acc], %q[row]\n\t"
      "vldrw.32 %q[row], [%[table], %[mult]]\n\t"
      "vqrdmulh.s32 %q[acc], %q[acc], %q[row]\n\t"
      "vldrw.32 %q[row], [%[table], %[right]]\n\t"
      "vand %q[fixup], %q[acc], %q[row]\n\t"
      "vshr.s32 %q[fixup], %q[fixup], #31\n\t"
      "vqadd.s32 %q[acc], %q[acc], %q[fixup]\n\t"
      "vrshl.s32 %q[acc], %q[acc], %q[row]\n\t"
      "vadd.i32 %q[acc], %q[acc], %[offset]\n\t"
      "vmax.s32 %q[acc], %q[acc], %q[lo]\n\t"
      "vmin.s32 %q[acc], %q[acc], %q[hi]"
      : [acc] "+w"(acc), [row] "=&w"(row), [fixup] "=&w"(fixup)
      : [table] "r"(table), [mult] "i"(kMultiplierAt), [left] "i"(kLeftShiftAt), [right] "i"(kMinusRightShiftAt),
        [offset] "r"(output_offset), [lo] "w"(act_min), [hi] "w"(act_max),
        "m"(*reinterpret_cast<const int32_t(*)[kEnd / 4]>(table)));
  return acc;
}

struct GemmArgs {
  int32_t depth;  // k
  int32_t out_c;
  const uint8_t* prepared;
  int32_t output_offset, act_min, act_max;
};

// One chunk of 16 along k with the rows in q0 (and q1): the weight loads and multiply-adds
// into the eight even core registers, shared by the loop and the partial last chunk.
#define MCUFLOW_MVE_DOT_2X4_STEP   \
  "vldrb.8 q2, [%[w]], #16\n\t"   \
  "vmladava.s8 r0, q0, q2\n\t"    \
  "vmladava.s8 r8, q1, q2\n\t"    \
  "vldrb.8 q2, [%[w]], #16\n\t"   \
  "vmladava.s8 r2, q0, q2\n\t"    \
  "vmladava.s8 r10, q1, q2\n\t"   \
  "vldrb.8 q2, [%[w]], #16\n\t"   \
  "vmladava.s8 r4, q0, q2\n\t"    \
  "vmladava.s8 r12, q1, q2\n\t"   \
  "vldrb.8 q2, [%[w]], #16\n\t"   \
  "vmladava.s8 r6, q0, q2\n\t"    \
  "vmladava.s8 lr, q1, q2"
#define MCUFLOW_MVE_DOT_1X8_STEP   \
  "vldrb.8 q1, [%[wa]], #16\n\t"  \
  "vmladava.s8 r0, q0, q1\n\t"    \
  "vldrb.8 q2, [%[wa]], #16\n\t"  \
  "vmladava.s8 r2, q0, q2\n\t"    \
  "vldrb.8 q1, [%[wa]], #16\n\t"  \
  "vmladava.s8 r4, q0, q1\n\t"    \
  "vldrb.8 q2, [%[wa]], #16\n\t"  \
  "vmladava.s8 r6, q0, q2\n\t"    \
  "vldrb.8 q1, [%[wb]], #16\n\t"  \
  "vmladava.s8 r8, q0, q1\n\t"    \
  "vldrb.8 q2, [%[wb]], #16\n\t"  \
  "vmladava.s8 r10, q0, q2\n\t"   \
  "vldrb.8 q1, [%[wb]], #16\n\t"  \
  "vmladava.s8 r12, q0, q1\n\t"   \
  "vldrb.8 q2, [%[wb]], #16\n\t"  \
  "vmladava.s8 lr, q0, q2"

// Two rows against one block of four output channels: acc_r[j] = bias'[j] + row_r . w[j].
// Hand-scheduled because the eight accumulators must live in the eight even core registers
// VMLADAVA accepts (r0 ... r12, lr), which the compiler does not manage without spilling.
// `weights` points at the block's weights and comes back past them.
inline void dot_2x4(const int8_t* row0, const int8_t* row1, const int8_t*& weights, int32_t depth,
                    const int32_t* bias, int32x4_t& acc0, int32x4_t& acc1) {
  asm volatile(
      "ldm %[bias], {r0, r2, r4, r6}\n\t"
      "ldm %[bias], {r8, r10, r12, lr}\n\t"
      "subs %[k], %[k], #16\n\t"  // k: depth left minus one chunk
      "blt 2f\n"
      "1:\n\t"
      "vldrb.8 q0, [%[a0]], #16\n\t"
      "vldrb.8 q1, [%[a1]], #16\n\t"
      MCUFLOW_MVE_DOT_2X4_STEP "\n\t"
      "subs %[k], %[k], #16\n\t"
      "bge 1b\n"
      "2:\n\t"
      "adds %[k], %[k], #16\n\t"  // k: depth left, 0 ... 15
      "beq 3f\n\t"
      // Last partial chunk: the rows are read only up to depth (the other lanes are zeroed);
      // the packed weights are zero padded there anyway.
      "vctp.8 %[k]\n\t"
      "vpstt\n\t"
      "vldrbt.8 q0, [%[a0]]\n\t"
      "vldrbt.8 q1, [%[a1]]\n\t"
      MCUFLOW_MVE_DOT_2X4_STEP "\n"
      "3:\n\t"
      // Lanes 0, 1 are the low doubleword of the q register, lanes 2, 3 the high one.
      "vmov %e[acc0], r0, r2\n\t"
      "vmov %f[acc0], r4, r6\n\t"
      "vmov %e[acc1], r8, r10\n\t"
      "vmov %f[acc1], r12, lr\n\t"
      : [acc0] "=&w"(acc0), [acc1] "=&w"(acc1), [a0] "+r"(row0), [a1] "+r"(row1), [w] "+r"(weights),
        [k] "+r"(depth)
      : [bias] "r"(bias)
      : "r0", "r2", "r4", "r6", "r8", "r10", "r12", "lr", "q0", "q1", "q2", "p0", "cc", "memory");
}

// One row against two blocks of four output channels (the weights at weights_a and weights_b,
// each block's table right before its weights): acc_a[j] = bias'_a[j] + row . w_a[j], and
// likewise for b. Both pointers come back past their blocks' weights.
inline void dot_1x8(const int8_t* row, const int8_t*& weights_a, const int8_t*& weights_b, int32_t depth,
                    int32x4_t& acc_a, int32x4_t& acc_b) {
  constexpr int32_t kTableBytes = kMveTableRows * kMveGemmBlock * 4;
  asm volatile(
      "ldrd r0, r2, [%[wa], %[bias]]\n\t"
      "ldrd r4, r6, [%[wa], %[bias] + 8]\n\t"
      "ldrd r8, r10, [%[wb], %[bias]]\n\t"
      "ldrd r12, lr, [%[wb], %[bias] + 8]\n\t"
      "subs %[k], %[k], #16\n\t"  // k: depth left minus one chunk
      "blt 2f\n"
      "1:\n\t"
      "vldrb.8 q0, [%[a]], #16\n\t"
      MCUFLOW_MVE_DOT_1X8_STEP "\n\t"
      "subs %[k], %[k], #16\n\t"
      "bge 1b\n"
      "2:\n\t"
      "adds %[k], %[k], #16\n\t"  // k: depth left, 0 ... 15
      "beq 3f\n\t"
      "vctp.8 %[k]\n\t"  // the row is read only up to depth; the weights are zero padded
      "vpst\n\t"
      "vldrbt.8 q0, [%[a]]\n\t"
      MCUFLOW_MVE_DOT_1X8_STEP "\n"
      "3:\n\t"
      "vmov %e[acc_a], r0, r2\n\t"
      "vmov %f[acc_a], r4, r6\n\t"
      "vmov %e[acc_b], r8, r10\n\t"
      "vmov %f[acc_b], r12, lr\n\t"
      : [acc_a] "=&w"(acc_a), [acc_b] "=&w"(acc_b), [a] "+r"(row), [wa] "+r"(weights_a), [wb] "+r"(weights_b),
        [k] "+r"(depth)
      : [bias] "i"(-kTableBytes)
      : "r0", "r2", "r4", "r6", "r8", "r10", "r12", "lr", "q0", "q1", "q2", "p0", "cc", "memory");
}

// Requantizes a GEMM block's accumulator with the block's channel table.
inline int32x4_t requantize_block(int32x4_t acc, const int32_t* table, const GemmArgs& g, int32x4_t act_min,
                                  int32x4_t act_max) {
  constexpr int32_t kRow = kMveGemmBlock * 4;  // bytes
  return requantize<kMveMultiplier * kRow, kMveLeftShift * kRow, kMveMinusRightShift * kRow>(acc, table, g.output_offset,
                                                                                              act_min, act_max);
}

// Stores a block's outputs: four, or the `channels` left of a partial last block.
inline void store_block(int8_t* out, int32x4_t y, int32_t channels) {
  if (channels >= kMveGemmBlock) vstrbq_s32(out, y);
  else vstrbq_p_s32(out, y, vctp32q(uint32_t(channels)));
}

// out0[oc] and out1[oc] for every output channel, from row0 and row1.
inline void gemm_two_rows(const GemmArgs& g, const int8_t* row0, const int8_t* row1, int8_t* out0, int8_t* out1) {
  const int32x4_t act_min = vdupq_n_s32(g.act_min), act_max = vdupq_n_s32(g.act_max);
  const MveGemmLayout layout{g.depth, g.out_c};
  const int8_t* weights = reinterpret_cast<const int8_t*>(g.prepared) + layout.table_bytes();
  for (int32_t oc = 0; oc < g.out_c; oc += kMveGemmBlock, weights += layout.table_bytes()) {
    const int32_t* table = reinterpret_cast<const int32_t*>(weights - layout.table_bytes());
    int32x4_t acc0, acc1;
    dot_2x4(row0, row1, weights, g.depth, table, acc0, acc1);  // moves `weights` past the block
    store_block(out0 + oc, requantize_block(acc0, table, g, act_min, act_max), g.out_c - oc);
    store_block(out1 + oc, requantize_block(acc1, table, g, act_min, act_max), g.out_c - oc);
  }
}

// out[oc] for every output channel, from one row: two blocks at a time.
inline void gemm_one_row(const GemmArgs& g, const int8_t* row, int8_t* out) {
  const int32x4_t act_min = vdupq_n_s32(g.act_min), act_max = vdupq_n_s32(g.act_max);
  const MveGemmLayout layout{g.depth, g.out_c};
  const int8_t* weights_a = reinterpret_cast<const int8_t*>(g.prepared) + layout.table_bytes();
  int32_t oc = 0;
  for (; oc + kMveGemmBlock < g.out_c; oc += 2 * kMveGemmBlock) {
    const int8_t* weights_b = weights_a + layout.block_bytes();
    const int32_t* table_a = reinterpret_cast<const int32_t*>(weights_a - layout.table_bytes());
    const int32_t* table_b = reinterpret_cast<const int32_t*>(weights_b - layout.table_bytes());
    int32x4_t acc_a, acc_b;
    dot_1x8(row, weights_a, weights_b, g.depth, acc_a, acc_b);
    store_block(out + oc, requantize_block(acc_a, table_a, g, act_min, act_max), g.out_c - oc);
    store_block(out + oc + kMveGemmBlock, requantize_block(acc_b, table_b, g, act_min, act_max),
                g.out_c - oc - kMveGemmBlock);
    weights_a = weights_b + layout.table_bytes();
  }
  if (oc < g.out_c) {  // one block left: the two-row step with the row twice
    const int32_t* table = reinterpret_cast<const int32_t*>(weights_a - layout.table_bytes());
    int32x4_t acc, unused;
    dot_2x4(row, row, weights_a, g.depth, table, acc, unused);
    store_block(out + oc, requantize_block(acc, table, g, act_min, act_max), g.out_c - oc);
  }
}

// dst[0, n) = src[0, n), 16 bytes per tail-predicated step. In assembly: compiled, each step
// moves the predicate through core registers and each call sets up a counted loop.
inline void copy_bytes(int8_t* dst, const int8_t* src, int32_t n) {
  int8x16_t v;
  asm volatile(
      "cmp %[n], #0\n\t"
      "ble 2f\n"
      "1:\n\t"
      "vctp.8 %[n]\n\t"
      "vpstt\n\t"
      "vldrbt.8 %q[v], [%[src]], #16\n\t"
      "vstrbt.8 %q[v], [%[dst]], #16\n\t"
      "subs %[n], %[n], #16\n\t"
      "bgt 1b\n"
      "2:"
      : [v] "=&w"(v), [src] "+r"(src), [dst] "+r"(dst), [n] "+r"(n)
      :
      : "p0", "cc", "memory");
}

// dst[0, n) = value.
inline void fill_bytes(int8_t* dst, int8x16_t value, int32_t n) {
  asm volatile(
      "cmp %[n], #0\n\t"
      "ble 2f\n"
      "1:\n\t"
      "vctp.8 %[n]\n\t"
      "vpst\n\t"
      "vstrbt.8 %q[v], [%[dst]], #16\n\t"
      "subs %[n], %[n], #16\n\t"
      "bgt 1b\n"
      "2:"
      : [dst] "+r"(dst), [n] "+r"(n)
      : [v] "w"(value)
      : "p0", "cc", "memory");
}

#undef MCUFLOW_MVE_DOT_2X4_STEP
#undef MCUFLOW_MVE_DOT_1X8_STEP

}  // namespace mcuflow::kernels::mve
#endif  // __ARM_FEATURE_MVE
