// DSP-tier kernels (Armv7E-M / Armv8-M DSP extension: SMLAD, SXTB16 …). Each computes bit for
// bit what its reference kernel computes from the same params and inputs (weights, bias,
// multipliers, shifts); the compiler (compiler/src/tiers/dsp_rules.cpp) adds the extra inputs
// described here: arena scratch, and for depthwise and pointwise convs their weights widened to
// int16.
//
// Requantization runs from the reference's tables, per channel, as described at DspChannel.
// Accumulators hold twice the reference's sum: that doubled value is what SMMLAR needs. Conv
// kernels get the doubling for free from their scratch: they expand a block of kDspPixels
// output pixels (their im2col windows) into an arena scratch of int16 values
// 2 * (x - input_zero_point) (padding taps are 0), in the order the multiply loop reads it: per
// group of four window positions k..k+3, per pixel, the pairs (k, k+2) then (k+1, k+3) (the
// pairing SXTB16 gives the weights). Size: dsp_conv_scratch_bytes. Depthwise kernels double
// their widened weights instead.
//
// Each kernel's contract (tier_contract.h): its input slots, scratch size and the params it
// refuses (<kernel>_refusal), next to its declaration.
#pragma once
#include <cstdint>
#include <cstring>
#include "mcuflow/kernels/arith.h"
#include "mcuflow/kernels/elementwise_tiers.h"
#include "mcuflow/kernels/params.h"
#include "mcuflow/kernels/s16_tiers.h"
#include "mcuflow/kernels/tier_contract.h"

namespace mcuflow::kernels {

constexpr int32_t kDspPixels = 4;              // output pixels per conv block
constexpr int64_t kDspMaxProduct = 255 * 128;  // |(x - zero_point) * w| for int8 x and w
constexpr int32_t kDspMaxDepth = 32768;        // window positions: twice any sum fits in int32

// One channel's requantization of a doubled accumulator acc2 = 2 * acc, derived from the
// reference's bias, multiplier and shift, without the reference's 64-bit multiply and
// rounding divide. Fast path, when the right shift e = -shift is in [1, 21] and |acc| < 2^30
// for every possible window (|bias| + depth * kDspMaxProduct < 2^30):
//   the reference's rounding doubling high multiply floor((acc * m + 2^30) / 2^31) equals
//   SMMULR(acc2, m) (it cannot saturate: m >= 0); its quotient by 2^e rounded half away from
//   zero, plus the output offset, is (y - [y < 0] + 2^(e-1) + output_offset * 2^e) >> e. The
//   constant term, (2 * output_offset + 1) << (e - 1), joins the multiply as SMMLAR's
//   accumulate operand ("rounding"), and [y < 0] may be taken as [acc < 0]: they differ only
//   when y = 0, where the result is the offset either way. Every term stays below 2^31.
// Otherwise right_shift is -1, accumulators start at 0 and the reference formula runs on
// acc2 / 2 + bias.
struct DspChannel {
  int32_t acc_init;     // fast path: 2 * bias; else 0
  int32_t multiplier;
  int32_t rounding;     // fast path: (2 * output_offset + 1) << (e - 1)
  int32_t right_shift;  // fast path: e; else -1
  int32_t bias;         // the reference's bias and shift, for the other path
  int32_t shift;
};

inline bool dsp_fast_channel(int32_t bias, int32_t shift, int64_t depth) {
  const int64_t magnitude = (bias < 0 ? -int64_t(bias) : int64_t(bias)) + depth * kDspMaxProduct;
  return shift <= -1 && shift >= -21 && magnitude < (int64_t{1} << 30);
}

// The channel on the fast path (the caller knows it is on it); rounding_base is
// 2 * output_offset + 1.
inline DspChannel dsp_fast_channel_of(int32_t bias, int32_t multiplier, int32_t shift, int32_t rounding_base) {
  return {2 * bias, multiplier, int32_t(uint32_t(rounding_base) << (-shift - 1)), -shift, bias, shift};
}

inline DspChannel dsp_channel(int32_t bias, int32_t multiplier, int32_t shift, int32_t output_offset, int64_t depth) {
  if (dsp_fast_channel(bias, shift, depth)) return dsp_fast_channel_of(bias, multiplier, shift, 2 * output_offset + 1);
  return {0, multiplier, 0, -1, bias, shift};
}

inline int32_t smmlar(int32_t a, int32_t b, int32_t c) {  // c + round(a * b / 2^32), ties up
#if defined(__ARM_FEATURE_DSP)
  int32_t r;
  __asm__("smmlar %0, %1, %2, %3" : "=r"(r) : "r"(a), "r"(b), "r"(c));  // GCC never emits SMMLAR
  return r;
#else
  const uint64_t t = (uint64_t(uint32_t(c)) << 32) + uint64_t(int64_t(a) * b) + 0x80000000u;
  return int32_t(uint32_t(t >> 32));
#endif
}

// The reference's requantized value plus output offset (before the activation clamp), on the
// fast path, from the doubled accumulator.
inline int32_t dsp_requantize_fast(int32_t acc2, const DspChannel& c) {
  // right_shift is at most 21 in a program the compiler wrote; the mask keeps the shift defined
  // for any prepared value (Verify::kStructure does not recompute them: dsp::walk_matches).
  return (smmlar(acc2, c.multiplier, c.rounding) + (acc2 >> 31)) >> (c.right_shift & 31);
}

// The same for a doubled accumulator started at c.acc_init, on either path.
inline int32_t dsp_requantize(int32_t acc2, const DspChannel& c, int32_t output_offset) {
  if (c.right_shift >= 0) return dsp_requantize_fast(acc2, c);
  const int32_t acc = int32_t(uint32_t(acc2 >> 1) + uint32_t(c.bias));  // wraps like the reference
  return multiply_by_quantized_multiplier(acc, c.multiplier, c.shift) + output_offset;
}

// The output stage of add_s8_dsp and mul_s8_dsp on a doubled, left-shifted value v
// (elementwise_tiers.h): the reference's requantized value plus output offset is
// ((SMMLAR(v, m, rounding) + ([v < 0] & sign_mask)) >> e) + offset_after, e = max(-shift, 0).
// With e in [1, kDspFoldedShiftMax] the offset joins the rounding constant, (offset << e) +
// 2^(e-1), and |SMMULR| <= 2^30 leaves it room ("folded": offset_after 0); otherwise rounding is
// 2^(e-1) (0 when e = 0, where there is no sign step either) and the offset is added after.
constexpr int32_t kDspFoldedShiftMax = 22;
struct DspOutputStage {
  int32_t multiplier, rounding, sign_mask, right_shift, offset_after;
  bool folded;

  DspOutputStage(int32_t m, int32_t shift, int32_t offset)
      : multiplier(m), right_shift(shift < 0 ? -shift : 0), folded(right_shift >= 1 && right_shift <= kDspFoldedShiftMax) {
    const int32_t half = right_shift > 0 ? int32_t(uint32_t{1} << (right_shift - 1)) : 0;
    rounding = folded ? int32_t(uint32_t(offset) << right_shift) + half : half;
    sign_mask = right_shift > 0 ? -1 : 0;
    offset_after = folded ? 0 : offset;
  }
  int32_t operator()(int32_t v) const {
    return ((smmlar(v, multiplier, rounding) + ((v >> 31) & sign_mask)) >> right_shift) + offset_after;
  }
  int32_t folded_output(int32_t v) const { return (smmlar(v, multiplier, rounding) + (v >> 31)) >> right_shift; }
};

// Element-wise kernels. add_s8_dsp's tables: constant int32 [2][kByteValues], add_table_entry of
// input 1 then input 2 (elementwise_tiers.h); valid where add_tables_fit. mul_s8_dsp: where
// mul_product_fits. requantize_s8_dsp's table: constant int8 [kByteValues],
// requantize_table_entry. Every broadcast mode; each element's inputs are read before it is
// written, so the output may lie exactly over an input.
void add_s8_dsp(const BinaryParams& p, const int8_t* input1, const int8_t* input2, const int32_t* tables,
                int8_t* output);
void mul_s8_dsp(const BinaryParams& p, const int8_t* input1, const int8_t* input2, int8_t* output);
void clamp_s8_dsp(const ClampParams& p, const int8_t* input, int8_t* output);
void requantize_s8_dsp(const RequantizeParams& p, const int8_t* input, const int8_t* table, int8_t* output);
// lut_s8_dsp: the reference's inputs (its 256-entry table), nothing prepared.
void lut_s8_dsp(const LutParams& p, const int8_t* input, const int8_t* table, int8_t* output);
inline Refusal add_s8_dsp_refusal(const BinaryParams& p) {
  return add_tables_fit(p) ? Refusal::kNone : Refusal::kAddRange;
}
inline Refusal mul_s8_dsp_refusal(const BinaryParams& p) {
  return mul_product_fits(p) ? Refusal::kNone : Refusal::kMulRange;
}

// The reference's per-channel tables as the kernels read them: channel c uses bias[c] and
// multipliers / shifts [c * step] (step 0: one for all channels, per-tensor fc).
struct DspTables {
  const int32_t* bias;
  const int32_t* multipliers;
  const int32_t* shifts;
  int32_t step;
};

// A group's window positions (k_h * k_w * in_c / groups) padded to whole groups of four. A
// grouped conv's scratch holds each group's block of kDspPixels windows, group after group.
inline int32_t dsp_conv_depth(const ConvParams& p) { return (p.k_h * p.k_w * (p.in_c / p.groups) + 3) & ~3; }
inline int32_t dsp_conv_scratch_bytes(const ConvParams& p) {
  return p.groups * kDspPixels * dsp_conv_depth(p) * int32_t(sizeof(int16_t));
}

// The conv kernels' inputs: the reference's, then their scratch (dsp_conv_scratch_bytes).
constexpr uint8_t kDspConvScratchSlot = kWeightedSlots;

// 1x1 conv, no padding, any stride, in_c in [4, kDspMaxDepth]: pairs of output pixels times
// pairs of output channels, so each loaded word of inputs or weights feeds two SMLADs.
// Scratch (dsp_pw_scratch_bytes): a pair of pixels as int16 x - input_zero_point, per group of
// four input channels k..k+3 the pairs (k, k+2), (k+1, k+3) of the first pixel, then of the
// second. Prepared input, int32 [dsp_pw_prepared_words], per pair of output channels c, c + 1
// (dsp_pw_pair_words; c + 1 all zero when it is out_c): both channels' DspChannel::acc_init;
// per group the int16 pairs (2 w[c][k], 2 w[c][k+2]), (2 w[c][k+1], 2 w[c][k+3]), then the same of
// c + 1 (0 past in_c; doubled, as the accumulators are); then multiplier, rounding and
// right_shift of c, then of c + 1 (dsp_channel of the reference's tables).
// Inputs: the reference's, the scratch, then the prepared input (read instead of the weights).
inline Refusal conv_s8_1x1_dsp_refusal(const ConvParams& p) {
  const Refusal pointwise = pointwise_refusal(p);
  if (pointwise != Refusal::kNone) return pointwise;
  return p.in_c < 4 || p.in_c > kDspMaxDepth ? Refusal::kInputChannels : Refusal::kNone;
}
constexpr uint8_t kDspPwPreparedSlot = kDspConvScratchSlot + 1;
constexpr int32_t kDspPwPixels = 2;  // output pixels per pass
inline int32_t dsp_pw_groups(const ConvParams& p) { return (p.in_c + 3) / 4; }
inline int32_t dsp_pw_pair_words(const ConvParams& p) { return 4 * dsp_pw_groups(p) + 8; }
inline int32_t dsp_pw_prepared_words(const ConvParams& p) { return (p.out_c + 1) / 2 * dsp_pw_pair_words(p); }
inline int32_t dsp_pw_scratch_bytes(const ConvParams& p) {
  return kDspPwPixels * 4 * dsp_pw_groups(p) * int32_t(sizeof(int16_t));
}
// The reference's weights and tables of a conv op, as the prepared words derive from them.
struct ConvTables {
  const int8_t* weights;
  const int32_t* bias;
  const int32_t* multipliers;
  const int32_t* shifts;
};
// A weight doubled (as the DSP kernels' accumulators are), as the low int16 lane of a word.
inline uint32_t dsp_doubled(int8_t w) { return uint32_t(uint16_t(int16_t(2 * w))); }

// Bytes 0 and 2 of x as int16 lanes, doubled: (2 (int8) x, 2 (int8) (x >> 16)).
inline uint32_t dsp_doubled_pair(uint32_t x) {
#if defined(__ARM_FEATURE_DSP)
  uint32_t lanes;
  __asm__("sxtb16 %0, %1" : "=r"(lanes) : "r"(x));
  return (lanes << 1) & 0xFFFEFFFFu;  // each lane doubled: the low lane's carry out cleared
#else
  return dsp_doubled(int8_t(x)) | dsp_doubled(int8_t(x >> 16)) << 16;
#endif
}

// The prepared input in order: word(value) for each word, stopping with false as soon as it is
// (the compiler stores the words, the load-time check compares them: one walk, no per-word index
// arithmetic, so a board checks a table in a few instructions a word).
template <typename Word>
bool dsp_pw_walk_prepared(const ConvParams& p, const ConvTables& t, Word word) {
  const auto channel = [&](int32_t c) {
    return c < p.out_c ? dsp_channel(t.bias[c], t.multipliers[c], t.shifts[c], p.out.output_offset, p.in_c)
                       : DspChannel{0, 0, 0, 0, 0, 0};
  };
  const int32_t groups = dsp_pw_groups(p), whole = p.in_c / 4;
  for (int32_t first = 0; first < p.out_c; first += 2) {
    const DspChannel ch[2] = {channel(first), channel(first + 1)};
    if (!word(ch[0].acc_init) || !word(ch[1].acc_init)) return false;
    // Groups of four whole inputs of two real channels: one word load of each channel's weights.
    int32_t g = 0;
    if (first + 1 < p.out_c) {
      const int8_t* w0 = t.weights + int64_t(first) * p.in_c;
      for (const int8_t* w1 = w0 + p.in_c; g < whole; ++g, w0 += 4, w1 += 4) {
        uint32_t four0, four1;  // little-endian
        std::memcpy(&four0, w0, 4);
        std::memcpy(&four1, w1, 4);
        if (!word(int32_t(dsp_doubled_pair(four0))) || !word(int32_t(dsp_doubled_pair(four0 >> 8))) ||
            !word(int32_t(dsp_doubled_pair(four1))) || !word(int32_t(dsp_doubled_pair(four1 >> 8))))
          return false;
      }
    }
    for (; g < groups; ++g) {  // the last partial group, or a last channel without its pair
      for (int32_t c = first; c < first + 2; ++c) {
        const auto at = [&](int32_t k) {
          return c < p.out_c && 4 * g + k < p.in_c ? dsp_doubled(t.weights[int64_t(c) * p.in_c + 4 * g + k]) : 0u;
        };
        if (!word(int32_t(at(0) | at(2) << 16)) || !word(int32_t(at(1) | at(3) << 16))) return false;
      }
    }
    for (const DspChannel& c : ch) {
      if (!word(c.multiplier) || !word(c.rounding) || !word(c.right_shift)) return false;
    }
  }
  return true;
}
// bias and shifts: the reference's, for channels off the fast path.
void conv_s8_1x1_dsp(const ConvParams& p, const int8_t* input, const int32_t* prepared, const int32_t* bias,
                     const int32_t* shifts, int16_t* scratch, int8_t* output);
// Any conv, grouped or not, whose group's window (k_h * k_w * in_c / groups) has 4 to
// kDspMaxDepth positions.
inline Refusal conv_s8_dsp_refusal(const ConvParams& p) {
  const int64_t depth = int64_t(p.k_h) * p.k_w * (p.in_c / p.groups);
  return depth < 4 || depth > kDspMaxDepth ? Refusal::kWindowDepth : Refusal::kNone;
}
void conv_s8_dsp(const ConvParams& p, const int8_t* input, const int8_t* weights, const int32_t* bias,
                 const int32_t* multipliers, const int32_t* shifts, int16_t* scratch, int8_t* output);

// Fully connected, in_c in [4, kDspMaxDepth]: blocks of kDspPixels rows as conv pixels
// (scratch as for a 1x1 conv with in_c channels), remaining rows one at a time (only the
// first quarter of that scratch, or only that much when there are fewer than kDspPixels rows).
// Inputs: the reference's, then the scratch.
constexpr uint8_t kDspFcScratchSlot = kWeightedSlots;
inline Refusal fc_s8_dsp_refusal(const FcParams& p) {
  return p.in_c < 4 || p.in_c > kDspMaxDepth ? Refusal::kInputChannels : Refusal::kNone;
}
void fc_s8_dsp(const FcParams& p, const int8_t* input, const int8_t* weights, const int32_t* bias,
               const int32_t* multipliers, const int32_t* shifts, int16_t* scratch, int8_t* output);
inline int32_t dsp_fc_scratch_bytes(const FcParams& p) {
  return (p.rows >= kDspPixels ? kDspPixels : 1) * ((p.in_c + 3) & ~3) * int32_t(sizeof(int16_t));
}

// Depthwise conv, ch_mult 1, windows of up to kDspMaxTaps taps (any stride, padding,
// dilation). Prepared input, int32 [dsp_dw_prepared_words]: the weights doubled (so the
// accumulators are doubled) and widened for SMLABB/SMLATT,
// [ceil(out_c / 4)][k_h * k_w][2], per group of four channels c..c+3 and tap the int16 pairs
// (2 w[c], 2 w[c+2]) and (2 w[c+1], 2 w[c+3]) (0 past out_c); then one pixel of padding, in_c
// bytes of the input zero point (rounded up to whole words), which padding taps read so that
// every pixel runs the same code.
// Inputs: the reference's, then the prepared input (which the kernels read instead of the
// weights; the depthwise 3x3 kernel's below).
constexpr int32_t kDspMaxTaps = 25;
constexpr uint8_t kDspDwPreparedSlot = kWeightedSlots;
inline Refusal dwconv_s8_dsp_refusal(const DwConvParams& p) {
  if (p.ch_mult != 1) return Refusal::kChannelMultiplier;
  return int64_t(p.k_h) * p.k_w > kDspMaxTaps ? Refusal::kTaps : Refusal::kNone;
}
inline int32_t dsp_dw_weight_words(const DwConvParams& p) { return (p.out_c + 3) / 4 * p.k_h * p.k_w * 2; }
inline int32_t dsp_dw_prepared_words(const DwConvParams& p) { return dsp_dw_weight_words(p) + (p.in_c + 3) / 4; }
// `weights`: int8, or packed int4 (PackedInt4Weights: dwconv_s8_w4_dsp builds this input in its scratch).
template <typename Weights>
inline int32_t dsp_dw_prepared_word(const DwConvParams& p, const Weights& weights, int32_t i) {
  if (i >= dsp_dw_weight_words(p)) return int32_t(uint32_t(uint8_t(-p.input_offset)) * 0x01010101u);
  const int32_t taps = p.k_h * p.k_w, group = i / (taps * 2), tap = i / 2 % taps;
  auto w = [&](int32_t c) { return c < p.out_c ? dsp_doubled(weights[tap * p.out_c + c]) : 0u; };
  const int32_t c = 4 * group + i % 2;
  return int32_t(w(c) | (w(c + 2) << 16));
}
void dwconv_s8_dsp(const DwConvParams& p, const int8_t* input, const int32_t* prepared, const int32_t* bias,
                   const int32_t* multipliers, const int32_t* shifts, int8_t* output);

// Depthwise 3x3, ch_mult 1, stride_w 1, no dilation (any stride_h and padding): input rows are
// transposed into channel-major int16 rows in the scratch, so that SMLAD multiplies two
// horizontally adjacent taps at once and each loaded pair serves two output pixels.
// Prepared input, int32 [out_c][kDspDw3WeightWords]: per channel and kernel row y two int16
// pairs of its weights, doubled like the other kernels' accumulators: (wy0, wy1), (wy1, wy2)
// with wyx the tap at kernel row y, column x.
// Scratch: channels in chunks of dsp_dw3_chunk; 3 slots (one per input row held, slot iy mod 3),
// in each a row per channel of the chunk, channel after channel, of dsp_dw3_row_length values
// x - input_zero_point, where value j is input column j - pad_left (0 outside the input): a
// channel's row ends where the next one's starts. Then the int32 accumulators of
// one output row of the chunk's channels (out_w rounded up to even, per channel), and at the end
// of the scratch each channel's DspChannel. On the fast path (every channel on dsp_fast_channel,
// int8's own clamp) that area holds instead, ending where the scratch ends, each channel's record
// of kDspDw3RecordWords: out_w / 2, acc_init, its six weight words, multiplier, rounding,
// right_shift, so one pointer feeds the multiplies and the requantization of an output pair in
// registers; then a zero word.
// Inputs: the reference's, the prepared input, then the scratch.
constexpr uint8_t kDspDw3ScratchSlot = kDspDwPreparedSlot + 1;
inline Refusal dwconv_s8_3x3_dsp_refusal(const DwConvParams& p) {
  if (p.k_h != 3 || p.k_w != 3) return Refusal::kKernelSize;
  if (p.stride_w != 1) return Refusal::kStride;
  if (p.dil_h != 1 || p.dil_w != 1) return Refusal::kDilation;
  return dwconv_s8_dsp_refusal(p);
}
constexpr int32_t kDspDw3ScratchBudget = 8192;  // bytes; more channels than fit are done in chunks
constexpr int32_t kDspDw3WeightWords = 6;       // per channel
constexpr int32_t kDspDw3RecordWords = 5 + kDspDw3WeightWords;
inline int32_t dsp_dw3_row_length(const DwConvParams& p) { return (p.out_w + 4) & ~1; }
inline int32_t dsp_dw3_accumulators(const DwConvParams& p) { return (p.out_w + 1) & ~1; }  // int32 per channel
inline int32_t dsp_dw3_channel_bytes(const DwConvParams& p) {  // rows, then accumulators and requantization
  const int32_t general = dsp_dw3_accumulators(p) * int32_t(sizeof(int32_t)) + int32_t(sizeof(DspChannel));
  const int32_t fast = (kDspDw3RecordWords + 1) * int32_t(sizeof(int32_t));  // room for the zero after them
  return 3 * dsp_dw3_row_length(p) * int32_t(sizeof(int16_t)) + (general > fast ? general : fast);
}
inline int32_t dsp_dw3_chunk(const DwConvParams& p) {
  const int32_t all = (p.out_c + 3) & ~3, fit = kDspDw3ScratchBudget / dsp_dw3_channel_bytes(p) & ~3;
  return all <= fit ? all : (fit > 4 ? fit : 4);
}
// A chunk's rows, then the larger of the general path's accumulators and DspChannels and the fast
// path's records with the zero after them (what a run writes: the plan's high water is exact).
inline int32_t dsp_dw3_scratch_bytes(const DwConvParams& p) {
  const int32_t chunk = dsp_dw3_chunk(p);
  const int32_t general = chunk * (dsp_dw3_accumulators(p) * int32_t(sizeof(int32_t)) + int32_t(sizeof(DspChannel)));
  const int32_t fast = (chunk * kDspDw3RecordWords + 1) * int32_t(sizeof(int32_t));
  return chunk * 3 * dsp_dw3_row_length(p) * int32_t(sizeof(int16_t)) + (general > fast ? general : fast);
}
// The prepared input in order: word(value) for each word, stopping with false as soon as it is.
template <typename Word>
bool dsp_dw3_walk_prepared(const DwConvParams& p, const int8_t* weights, Word word) {
  for (int32_t c = 0; c < p.out_c; ++c) {
    for (int32_t y = 0; y < 3; ++y) {
      const auto w = [&](int32_t x) { return dsp_doubled(weights[(y * 3 + x) * p.out_c + c]); };
      const uint32_t w1 = w(1);
      if (!word(int32_t(w(0) | w1 << 16)) || !word(int32_t(w1 | w(2) << 16))) return false;
    }
  }
  return true;
}
void dwconv_s8_3x3_dsp(const DwConvParams& p, const int8_t* input, const int32_t* prepared, const int32_t* bias,
                       const int32_t* multipliers, const int32_t* shifts, int16_t* scratch, int8_t* output);

// Pooling: the reference's inputs, nothing prepared (kernels/include/mcuflow/kernels/pool_window.h).
void avgpool_s8_dsp(const PoolParams& p, const int8_t* input, int8_t* output);
void maxpool_s8_dsp(const PoolParams& p, const int8_t* input, int8_t* output);
// Sum and mean (reduce_sum_refusal, tier_contract.h): the reference's input; never in place.
void reduce_s8_dsp(const ReduceParams& p, const int8_t* input, int8_t* output);

// Softmax: the reference's input, then the exp table (constant int32 [kSoftmaxTableEntries],
// softmax_exp_table_entry, softmax_table.h). Each element is read before it is written.
void softmax_s8_dsp(const SoftmaxParams& p, const int8_t* input, const int32_t* exp_table, int8_t* output);

// int16 activations (A16W8): the reference kernels' inputs (conv_s16, dwconv_s16, fc_s16,
// avgpool_s16). Each weighted call checks its weights once for the int32 path of s16_tiers.h
// (SMLAD or SMLAxy products, SMMLAR requantization) and runs its reference kernel where it does
// not hold. The conv and fc kernels take an arena scratch after the reference's inputs: blocks
// of kDspPixels output pixels (fc: rows) expanded as for the int8 conv kernels, holding the int16
// inputs themselves (not doubled; the input zero point is 0): dsp_conv_scratch_bytes, for fc
// dsp_s16_fc_scratch_bytes (always four rows). Their refusals are the int8 kernels' (depth 4 to
// kDspMaxDepth), ungrouped.
constexpr uint8_t kDspS16ScratchSlot = kWeightedSlots;
inline Refusal conv_s16_1x1_dsp_refusal(const ConvParams& p) { return conv_s8_1x1_dsp_refusal(p); }
inline Refusal conv_s16_dsp_refusal(const ConvParams& p) {
  return p.groups != 1 ? Refusal::kGroups : conv_s8_dsp_refusal(p);
}
inline Refusal fc_s16_dsp_refusal(const FcParams& p) { return fc_s8_dsp_refusal(p); }
inline int32_t dsp_s16_fc_scratch_bytes(const FcParams& p) {
  return kDspPixels * ((p.in_c + 3) & ~3) * int32_t(sizeof(int16_t));
}
void conv_s16_1x1_dsp(const ConvParams& p, const int16_t* input, const int8_t* weights, const int64_t* bias,
                      const int32_t* multipliers, const int32_t* shifts, int16_t* scratch, int16_t* output);
void conv_s16_dsp(const ConvParams& p, const int16_t* input, const int8_t* weights, const int64_t* bias,
                  const int32_t* multipliers, const int32_t* shifts, int16_t* scratch, int16_t* output);
void fc_s16_dsp(const FcParams& p, const int16_t* input, const int8_t* weights, const int64_t* bias,
                const int32_t* multipliers, const int32_t* shifts, int16_t* scratch, int16_t* output);
// Depthwise: the int8 kernel's params (ch_mult 1, windows of up to kDspMaxTaps taps, any stride,
// padding, dilation), nothing prepared.
inline Refusal dwconv_s16_dsp_refusal(const DwConvParams& p) { return dwconv_s8_dsp_refusal(p); }
void dwconv_s16_dsp(const DwConvParams& p, const int16_t* input, const int8_t* weights, const int64_t* bias,
                    const int32_t* multipliers, const int32_t* shifts, int16_t* output);
// Average pooling sums a window in int32 (s16_tiers.h).
inline Refusal avgpool_s16_dsp_refusal(const PoolParams& p) { return s16_pool_window_refusal(p); }
void avgpool_s16_dsp(const PoolParams& p, const int16_t* input, int16_t* output);
// Float32 convolution, depthwise convolution and linear layers on cores with a single-precision
// FPU: their references' params and inputs (nothing prepared), VMLA.F32 (multiply, round, add,
// round: the reference's arithmetic) in the reference's order per output (kernels/dsp/
// f32_dsp_blocks.h, docs/kernels_float.md). conv_f32_dsp takes one group (ungrouped_refusal),
// conv_f32_1x1_dsp a pointwise conv (pointwise_refusal), dwconv_f32_dsp channel multiplier 1
// (unit_multiplier_refusal), fc_f32_dsp any layer.
void conv_f32_dsp(const ConvParams& p, const float* input, const float* weights, const float* bias, float* output);
void conv_f32_1x1_dsp(const ConvParams& p, const float* input, const float* weights, const float* bias,
                      float* output);
void dwconv_f32_dsp(const DwConvParams& p, const float* input, const float* weights, const float* bias, float* output);
void fc_f32_dsp(const FcParams& p, const float* input, const float* weights, const float* bias, float* output);
// Packed int4 weights (W4A8): conv_s8_w4_1x1_dsp and conv_s8_w4_dsp unpack the op's weights
// (int4_weights.h) into the front of their scratch, then run conv_s8_dsp (a 1x1 window for the
// former) on the copy with its own scratch after it; fc_s8_w4_dsp does so per block of output channels
// (dsp_fc_w4_block; a linear layer never runs in place, so the order of its outputs is free); dwconv_s8_w4_dsp builds
// dwconv_s8_dsp's prepared input (dsp_dw_prepared_word of the packed weights) in its scratch and
// runs it. Inputs: the w4 reference's, then the scratch. Nothing is prepared at compile time, and
// the int8 kernels walk as before: each keeps its int8 kernel's aliasing contract. Refusals: the
// int8 kernel's, and w4_weights_refusal where the whole weight tensor is unpacked.
constexpr uint8_t kDspW4ScratchSlot = kWeightedSlots;
static_assert(kDspW4ScratchSlot == kDspConvScratchSlot && kDspW4ScratchSlot == kDspFcScratchSlot,
              "the int4 kernels' scratch takes their int8 kernels' slot: their checks are shared");
// Whole chunks of 16 (the compiler plans them as [bytes / 16][16]).
constexpr int32_t dsp_w4_scratch_bytes(int32_t weight_count, int32_t int8_scratch_bytes) {
  return w4_unpacked_bytes(weight_count) + ((int8_scratch_bytes + 15) & ~15);
}
inline int32_t dsp_conv_w4_scratch_bytes(const ConvParams& p) {
  return dsp_w4_scratch_bytes(p.out_c * p.k_h * p.k_w * (p.in_c / p.groups), dsp_conv_scratch_bytes(p));
}
// fc_s8_w4_dsp unpacks a block of output channels at a time: as many as kDspW4FcBlockBytes of
// weights hold (an even count, at least 2, at most out_c rounded up to even).
constexpr int32_t kDspW4FcBlockBytes = 4096;
inline int32_t dsp_fc_w4_block(const FcParams& p) {
  const int32_t all = (p.out_c + 1) & ~1, fit = kDspW4FcBlockBytes / p.in_c & ~1;
  return all <= fit ? all : (fit > 2 ? fit : 2);
}
inline int32_t dsp_fc_w4_scratch_bytes(const FcParams& p) {
  return dsp_w4_scratch_bytes(dsp_fc_w4_block(p) * p.in_c, dsp_fc_scratch_bytes(p));
}
inline int32_t dsp_dw_w4_scratch_bytes(const DwConvParams& p) { return dsp_w4_scratch_bytes(0, dsp_dw_prepared_words(p) * 4); }
inline Refusal conv_s8_w4_1x1_dsp_refusal(const ConvParams& p) {
  const Refusal r = conv_s8_1x1_dsp_refusal(p);
  return r != Refusal::kNone ? r : w4_weights_refusal(int64_t(p.out_c) * p.in_c);
}
inline Refusal conv_s8_w4_dsp_refusal(const ConvParams& p) {
  const Refusal r = conv_s8_dsp_refusal(p);
  return r != Refusal::kNone ? r : w4_weights_refusal(int64_t(p.out_c) * p.k_h * p.k_w * (p.in_c / p.groups));
}
inline Refusal dwconv_s8_w4_dsp_refusal(const DwConvParams& p) {
  const Refusal r = dwconv_s8_dsp_refusal(p);
  return r != Refusal::kNone ? r : w4_weights_refusal(int64_t(p.out_c) * p.k_h * p.k_w);
}
inline Refusal fc_s8_w4_dsp_refusal(const FcParams& p) { return fc_s8_dsp_refusal(p); }  // a block at a time
void conv_s8_w4_1x1_dsp(const ConvParams& p, const int8_t* input, const uint8_t* weights, const int32_t* bias,
                        const int32_t* multipliers, const int32_t* shifts, int8_t* scratch, int8_t* output);
void conv_s8_w4_dsp(const ConvParams& p, const int8_t* input, const uint8_t* weights, const int32_t* bias,
                    const int32_t* multipliers, const int32_t* shifts, int8_t* scratch, int8_t* output);
void dwconv_s8_w4_dsp(const DwConvParams& p, const int8_t* input, const uint8_t* weights, const int32_t* bias,
                      const int32_t* multipliers, const int32_t* shifts, int8_t* scratch, int8_t* output);
void fc_s8_w4_dsp(const FcParams& p, const int8_t* input, const uint8_t* weights, const int32_t* bias,
                  const int32_t* multipliers, const int32_t* shifts, int8_t* scratch, int8_t* output);

// --- cat slice and strided copy: the references' params and inputs; in place as they are ---
// concat_slice_s8: a slice that requantizes also takes its table (input kRequantizeTableSlot,
// constant int8 [kByteValues], concat_requantize_table_entry, elementwise_tiers.h); a plain copy
// takes nothing more (table null). strided_copy_b8: nothing prepared; rows of unit step move as
// blocks, other rows element by element as the reference does. Each block is read before it is
// written, so a copy onto its own source (the planner's in-place slices) stays correct.
void concat_slice_s8_dsp(const ConcatSliceParams& p, const int8_t* input, const int8_t* table, int8_t* output);
void strided_copy_b8_dsp(const StridedCopyParams& p, const int8_t* input, int8_t* output);
// int16 table activations and softmax: the reference's inputs (the compiler's 513-entry tables,
// lut_s16.h, softmax_s16.h) and check, nothing prepared; each interpolation one SMLAD on the two neighbouring entries read as a word.
void lut_s16_dsp(const LutParams& p, const int16_t* input, const int16_t* table, int16_t* output);
void softmax_s16_dsp(const SoftmaxS16Params& p, const int16_t* input, const int16_t* exp_table, int16_t* output);
// permute_b8_dsp: the reference's inputs, any permutation (permute_walk.h).
void permute_b8_dsp(const PermuteParams& p, const int8_t* input, int8_t* output);

// quantize_f32_s8_dsp: the reference's inputs, any params; needs the single-precision FPU.
void quantize_f32_s8_dsp(const QuantizeParams& p, const float* input, int8_t* output);

// dequantize_s8_f32_dsp: as dequantize_s8_f32_scalar (its table), four input bytes per word.
void dequantize_s8_f32_dsp(const QuantizeParams& p, const int8_t* input, const uint32_t* table, float* output);

}  // namespace mcuflow::kernels
