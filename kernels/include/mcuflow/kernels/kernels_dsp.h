// DSP-tier kernels (Armv7E-M / Armv8-M DSP extension: SMLAD, SXTB16 …). Each computes bit for
// bit what its reference kernel computes from the same params and inputs (weights, bias,
// multipliers, shifts); the compiler (compiler/src/tiers/dsp_rules.cpp) adds the extra inputs
// described here: arena scratch, and for depthwise convs their weights widened to int16.
//
// Requantization runs from the reference's tables, per channel, as described at DspChannel.
// Accumulators hold twice the reference's sum: that doubled value is what SMMLAR needs. Conv
// kernels get the doubling for free from their scratch: they expand a block of kDspPixels
// output pixels (their im2col windows) into an arena scratch of int16 values
// 2 * (x - input_zero_point) (padding taps are 0), in the order the multiply loop reads it: per
// group of four window positions k..k+3, per pixel, the pairs (k, k+2) then (k+1, k+3) (the
// pairing SXTB16 gives the weights). Size: dsp_conv_scratch_bytes. Depthwise kernels double
// their widened weights instead.
#pragma once
#include <cstdint>
#include "mcuflow/kernels/arith.h"
#include "mcuflow/kernels/params.h"

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
  return (smmlar(acc2, c.multiplier, c.rounding) + (acc2 >> 31)) >> c.right_shift;
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

// The reference's per-channel tables as the kernels read them: channel c uses bias[c] and
// multipliers / shifts [c * step] (step 0: one for all channels, per-tensor fc).
struct DspTables {
  const int32_t* bias;
  const int32_t* multipliers;
  const int32_t* shifts;
  int32_t step;
};

// Window positions (k_h * k_w * in_c) padded to whole groups of four.
inline int32_t dsp_conv_depth(const ConvParams& p) { return (p.k_h * p.k_w * p.in_c + 3) & ~3; }
inline int32_t dsp_conv_scratch_bytes(const ConvParams& p) {
  return kDspPixels * dsp_conv_depth(p) * int32_t(sizeof(int16_t));
}

// 1x1 conv, no padding, any stride, in_c in [4, kDspMaxDepth].
void conv_s8_1x1_dsp(const ConvParams& p, const int8_t* input, const int8_t* weights, const int32_t* bias,
                     const int32_t* multipliers, const int32_t* shifts, int16_t* scratch, int8_t* output);
// Any conv whose window (k_h * k_w * in_c) has 4 to kDspMaxDepth positions.
void conv_s8_dsp(const ConvParams& p, const int8_t* input, const int8_t* weights, const int32_t* bias,
                 const int32_t* multipliers, const int32_t* shifts, int16_t* scratch, int8_t* output);

// Fully connected, in_c in [4, kDspMaxDepth]: blocks of kDspPixels rows as conv pixels
// (scratch as for a 1x1 conv with in_c channels), remaining rows one at a time (only the
// first quarter of that scratch, or only that much when there are fewer than kDspPixels rows).
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
constexpr int32_t kDspMaxTaps = 25;
inline int32_t dsp_dw_weight_words(const DwConvParams& p) { return (p.out_c + 3) / 4 * p.k_h * p.k_w * 2; }
inline int32_t dsp_dw_prepared_words(const DwConvParams& p) { return dsp_dw_weight_words(p) + (p.in_c + 3) / 4; }
inline int32_t dsp_dw_prepared_word(const DwConvParams& p, const int8_t* weights, int32_t i) {
  if (i >= dsp_dw_weight_words(p)) return int32_t(uint32_t(uint8_t(-p.input_offset)) * 0x01010101u);
  const int32_t taps = p.k_h * p.k_w, group = i / (taps * 2), tap = i / 2 % taps;
  auto w = [&](int32_t c) { return c < p.out_c ? uint32_t(uint16_t(int16_t(2 * weights[tap * p.out_c + c]))) : 0u; };
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
// Scratch: channels in chunks of dsp_dw3_chunk; per channel of the chunk 3 rows (one per
// input row held, slot iy mod 3) of dsp_dw3_row_length values x - input_zero_point, where
// value j is input column j - pad_left (0 outside the input); then the int32 accumulators of
// one output row of the chunk's channels (out_w rounded up to even, per channel); then each
// channel's DspChannel.
constexpr int32_t kDspDw3ScratchBudget = 4096;  // bytes; more channels than fit are done in chunks
constexpr int32_t kDspDw3WeightWords = 6;       // per channel
inline int32_t dsp_dw3_row_length(const DwConvParams& p) { return (p.out_w + 4) & ~1; }
inline int32_t dsp_dw3_accumulators(const DwConvParams& p) { return (p.out_w + 1) & ~1; }  // int32 per channel
inline int32_t dsp_dw3_channel_bytes(const DwConvParams& p) {  // rows, accumulators, requantization
  return 3 * dsp_dw3_row_length(p) * int32_t(sizeof(int16_t)) + dsp_dw3_accumulators(p) * int32_t(sizeof(int32_t)) +
         int32_t(sizeof(DspChannel));
}
inline int32_t dsp_dw3_chunk(const DwConvParams& p) {
  const int32_t all = (p.out_c + 3) & ~3, fit = kDspDw3ScratchBudget / dsp_dw3_channel_bytes(p) & ~3;
  return all <= fit ? all : (fit > 4 ? fit : 4);
}
inline int32_t dsp_dw3_scratch_bytes(const DwConvParams& p) { return dsp_dw3_chunk(p) * dsp_dw3_channel_bytes(p); }
// Word i of the prepared input.
inline int32_t dsp_dw3_weight_word(const DwConvParams& p, const int8_t* weights, int32_t i) {
  const int32_t c = i / kDspDw3WeightWords, y = i % kDspDw3WeightWords / 2, x = i % 2;
  auto w = [&](int32_t column) { return uint32_t(uint16_t(int16_t(2 * weights[(y * 3 + column) * p.out_c + c]))); };
  return int32_t(w(x) | w(x + 1) << 16);
}
void dwconv_s8_3x3_dsp(const DwConvParams& p, const int8_t* input, const int32_t* prepared, const int32_t* bias,
                       const int32_t* multipliers, const int32_t* shifts, int16_t* scratch, int8_t* output);

// Pooling: the reference's inputs, nothing prepared (kernels/include/mcuflow/kernels/pool_window.h).
void avgpool_s8_dsp(const PoolParams& p, const int8_t* input, int8_t* output);
void maxpool_s8_dsp(const PoolParams& p, const int8_t* input, int8_t* output);

// Softmax: the reference's input, then the exp table (constant int32 [kSoftmaxTableEntries],
// softmax_exp_table_entry, softmax_table.h). Each element is read before it is written.
void softmax_s8_dsp(const SoftmaxParams& p, const int8_t* input, const int32_t* exp_table, int8_t* output);

}  // namespace mcuflow::kernels

#if defined(__ARM_FEATURE_DSP)
#include <arm_acle.h>
#include <cstring>

// Building blocks shared by the DSP kernels (inline: each kernel is its own translation unit).
namespace mcuflow::kernels::dsp {

inline int32_t read_word(const int8_t* p) {  // any alignment: LDR handles it on these cores
  int32_t v;
  std::memcpy(&v, p, sizeof(v));
  return v;
}

// --- element-wise kernels: four int8 per word ---

inline uint32_t byte_splat(int32_t v) { return (uint32_t(v) & 0xFFu) * 0x01010101u; }

// Each byte of x clamped to [lo, hi] (byte_splat bounds): SSUB8 sets the GE flag of each byte
// and SEL picks; one asm, since the flags must reach SEL unchanged.
inline uint32_t clamp_bytes(uint32_t x, uint32_t lo, uint32_t hi) {
  uint32_t scratch;
  __asm__("ssub8 %[t], %[x], %[lo]\n\t"
          "sel %[x], %[x], %[lo]\n\t"
          "ssub8 %[t], %[x], %[hi]\n\t"
          "sel %[x], %[hi], %[x]"
          : [x] "+r"(x), [t] "=&r"(scratch)
          : [lo] "r"(lo), [hi] "r"(hi));
  return x;
}

// Four values saturated to int8 (SSAT) as the bytes of a word, v0 lowest.
inline uint32_t saturate_pack(int32_t v0, int32_t v1, int32_t v2, int32_t v3) {
  return (uint32_t(__ssat(v0, 8)) & 0xFFu) | (uint32_t(__ssat(v1, 8)) & 0xFFu) << 8 |
         (uint32_t(__ssat(v2, 8)) & 0xFFu) << 16 | uint32_t(__ssat(v3, 8)) << 24;
}

inline void write_word(int8_t* p, uint32_t v) { std::memcpy(p, &v, sizeof(v)); }

// Bytes 1 and 3 sign-extended to 16 bits. GCC 12 does not fold a rotate into SXTB16 itself.
inline int32_t sxtb16_odd(int32_t x) {
  int32_t r;
  __asm__("sxtb16 %0, %1, ror #8" : "=r"(r) : "r"(x));
  return r;
}
inline int32_t sxtab16_odd(int32_t acc, int32_t x) {
  int32_t r;
  __asm__("sxtab16 %0, %1, %2, ror #8" : "=r"(r) : "r"(acc), "r"(x));
  return r;
}

// (lo[15:0], hi[15:0]) and (lo[31:16], hi[31:16]) as int16 pairs: PKHBT, PKHTB (GCC builds them
// from shifts and ORs otherwise).
inline int32_t pack_low_halves(int32_t lo, int32_t hi) {
  int32_t r;
  __asm__("pkhbt %0, %1, %2, lsl #16" : "=r"(r) : "r"(lo), "r"(hi));
  return r;
}
inline int32_t pack_high_halves(int32_t lo, int32_t hi) {
  int32_t r;
  __asm__("pkhtb %0, %1, %2, asr #16" : "=r"(r) : "r"(hi), "r"(lo));
  return r;
}

struct Words4 {
  int32_t a, b, c, d;
};
// One LDM of four words, advancing p; GCC splits such loads into single LDRs otherwise.
// r7 stays out of the list (frame pointer in some builds).
inline Words4 load4_advance(const int32_t*& p) {
  register int32_t a __asm__("r4"), b __asm__("r5"), c __asm__("r6"), d __asm__("r8");
  __asm__("ldmia %0!, {%1, %2, %3, %4}"
          : "+r"(p), "=r"(a), "=r"(b), "=r"(c), "=r"(d)
          : "m"(*reinterpret_cast<const int32_t(*)[4]>(p)));
  return {a, b, c, d};
}

// --- conv blocks: kDspPixels output pixels, expanded into scratch, times every weight row ---

// Writes one pixel slot of a scratch laid out for kSlots pixels (kDspPixels for conv blocks,
// 1 for a single fc row): window position k of the slot is halfword
// (k / 4) * 4 * kSlots + order(k % 4), order = {0, 2, 1, 3}, of `slot_base`.
template <int32_t kSlots>
struct SlotWriter {
  static constexpr int32_t kGroup = 4 * kSlots;  // halfwords per group of four positions
  int16_t* slot_base;                            // scratch + 4 * slot
  int32_t offset_pair;                           // the input offset in both halves

  SlotWriter(int16_t* scratch, int32_t slot, int32_t offset)
      : slot_base(scratch + 4 * slot), offset_pair(int32_t((uint32_t(offset) & 0xFFFFu) * 0x10001u)) {}

  void put(int32_t k, int32_t v) const { slot_base[(k >> 2) * kGroup + ((k & 1) << 1) + ((k >> 1) & 1)] = int16_t(v); }
  int32_t* group(int32_t k) const { return reinterpret_cast<int32_t*>(slot_base + (k >> 2) * kGroup); }

  // Window positions k..k+4*words-1 (k a multiple of 4) from input bytes: 2 * (x + offset).
  void words(const int8_t* src, int32_t words, int32_t k) const {
    for (int32_t* dst = group(k); words > 0; --words, src += 4, dst += kGroup / 2) {
      const int32_t x = read_word(src);
      const int32_t even = __sxtab16(offset_pair, x), odd = sxtab16_odd(offset_pair, x);
      dst[0] = __sadd16(even, even);
      dst[1] = __sadd16(odd, odd);
    }
  }

  // Window positions k..k+n-1 from n input bytes: 2 * (x + offset).
  void run(const int8_t* src, int32_t n, int32_t k) const {
    const int32_t offset = int16_t(offset_pair);
    for (; n > 0 && (k & 3); --n, ++k) put(k, 2 * (*src++ + offset));
    words(src, n >> 2, k);
    src += n & ~3;
    k += n & ~3;
    for (n &= 3; n > 0; --n, ++k) put(k, 2 * (*src++ + offset));
  }

  // Window positions k..k+n-1 are padding: they contribute 0.
  void zeros(int32_t n, int32_t k) const {
    for (; n > 0 && (k & 3); --n, ++k) put(k, 0);
    for (int32_t* dst = group(k); n >= 4; n -= 4, k += 4, dst += kGroup / 2) dst[0] = dst[1] = 0;
    for (; n > 0; --n, ++k) put(k, 0);
  }
};
using BlockWriter = SlotWriter<kDspPixels>;

// The im2col window of output pixel (oy, ox) into `slot`: window position
// (ky * k_w + kx) * in_c + ic holds input (iy, ix, ic), or 0 where (iy, ix) is padding.
inline void expand_window(const ConvParams& params, const int8_t* input, int32_t oy, int32_t ox, int32_t slot,
                          int16_t* scratch) {
  const ConvParams p = params;  // a copy: the scratch stores could alias the fields otherwise
  const BlockWriter out(scratch, slot, p.input_offset);
  const int32_t iy0 = oy * p.stride_h - p.pad_top, ix0 = ox * p.stride_w - p.pad_left;
  const int32_t row = p.k_w * p.in_c, row_bytes = p.in_w * p.in_c;
  // Taps kx0..kx1-1 of a row are inside the input.
  const int32_t kx0 = ix0 < 0 ? clamp_i32((-ix0 + p.dil_w - 1) / p.dil_w, 0, p.k_w) : 0;
  const int32_t kx1 = clamp_i32((p.in_w - ix0 + p.dil_w - 1) / p.dil_w, kx0, p.k_w);
  if (kx0 == 0 && kx1 == p.k_w && p.dil_w == 1 && (row & 3) == 0 && iy0 >= 0 &&
      iy0 + (p.k_h - 1) * p.dil_h < p.in_h) {  // inside the input, whole words: the common case
    const int8_t* src = input + iy0 * row_bytes + ix0 * p.in_c;
    for (int32_t k = 0; k < p.k_h * row; k += row, src += p.dil_h * row_bytes) out.words(src, row >> 2, k);
    return;
  }
  for (int32_t ky = 0, k = 0, iy = iy0; ky < p.k_h; ++ky, k += row, iy += p.dil_h) {
    if (iy < 0 || iy >= p.in_h) {
      out.zeros(row, k);
      continue;
    }
    out.zeros(kx0 * p.in_c, k);
    const int8_t* row_input = input + iy * row_bytes;
    if (p.dil_w == 1) {  // one contiguous run of input bytes
      if (kx1 > kx0) out.run(row_input + (ix0 + kx0) * p.in_c, (kx1 - kx0) * p.in_c, k + kx0 * p.in_c);
    } else {
      for (int32_t kx = kx0; kx < kx1; ++kx) out.run(row_input + (ix0 + kx * p.dil_w) * p.in_c, p.in_c, k + kx * p.in_c);
    }
    out.zeros((p.k_w - kx1) * p.in_c, k + kx1 * p.in_c);
  }
}

// a0..a3 += the dot products of four weights (int8 in w) with window positions 4g..4g+3 of
// the block's pixels (x points at group g and moves on to the next group).
inline void mac_group(int32_t w, const int32_t*& x, int32_t& a0, int32_t& a1, int32_t& a2, int32_t& a3) {
  const int32_t w_even = __sxtb16(w), w_odd = sxtb16_odd(w);
  const Words4 x01 = load4_advance(x);
  a0 = __smlad(x01.b, w_odd, __smlad(x01.a, w_even, a0));
  a1 = __smlad(x01.d, w_odd, __smlad(x01.c, w_even, a1));
  const Words4 x23 = load4_advance(x);
  a2 = __smlad(x23.b, w_odd, __smlad(x23.a, w_even, a2));
  a3 = __smlad(x23.d, w_odd, __smlad(x23.c, w_even, a3));
}

// mac_group over `groups` >= 1 groups, advancing w by 4 bytes and x by one group each: 14
// instructions per 16 multiply-accumulates. Written out because GCC spills within this
// 13-register loop; the loop body holds two groups and an odd count enters at the second.
inline void mac_groups(int32_t groups, const int8_t*& w, const int32_t*& x, int32_t& a0, int32_t& a1, int32_t& a2,
                       int32_t& a3) {
  register int32_t x0 __asm__("r4"), x1 __asm__("r5"), x2 __asm__("r6"), x3 __asm__("r8");  // LDM list order
  int32_t w_odd, w_even;
#define MCUFLOW_DSP_MAC_GROUP                                 \
  "ldr %[w_odd], [%[w]], #4\n\t"                              \
  "sxtb16 %[w_even], %[w_odd]\n\t"                            \
  "sxtb16 %[w_odd], %[w_odd], ror #8\n\t"                     \
  "ldmia %[x]!, {%[x0], %[x1], %[x2], %[x3]}\n\t"             \
  "smlad %[a0], %[x0], %[w_even], %[a0]\n\t"                  \
  "smlad %[a0], %[x1], %[w_odd], %[a0]\n\t"                   \
  "smlad %[a1], %[x2], %[w_even], %[a1]\n\t"                  \
  "smlad %[a1], %[x3], %[w_odd], %[a1]\n\t"                   \
  "ldmia %[x]!, {%[x0], %[x1], %[x2], %[x3]}\n\t"             \
  "smlad %[a2], %[x0], %[w_even], %[a2]\n\t"                  \
  "smlad %[a2], %[x1], %[w_odd], %[a2]\n\t"                   \
  "smlad %[a3], %[x2], %[w_even], %[a3]\n\t"                  \
  "smlad %[a3], %[x3], %[w_odd], %[a3]\n\t"
  __asm__(
      // groups - 1 = 2 * n + c: n + 1 passes from label 1 when c (groups even), else
      // one from label 2 then n from label 1.
      "subs %[groups], %[groups], #1\n\t"
      "lsrs %[groups], %[groups], #1\n\t"
      "bcc 2f\n\t"
      "1:\n\t" MCUFLOW_DSP_MAC_GROUP
      "2:\n\t" MCUFLOW_DSP_MAC_GROUP
      "subs %[groups], %[groups], #1\n\t"
      "bpl 1b"
      : [a0] "+r"(a0), [a1] "+r"(a1), [a2] "+r"(a2), [a3] "+r"(a3), [w] "+r"(w), [x] "+r"(x), [groups] "+r"(groups),
        [x0] "=&r"(x0), [x1] "=&r"(x1), [x2] "=&r"(x2), [x3] "=&r"(x3), [w_odd] "=&r"(w_odd), [w_even] "=&r"(w_even)
      :
      : "cc", "memory");
#undef MCUFLOW_DSP_MAC_GROUP
}

// Depthwise: a0..a3 (channels c..c+3) += the taps' input words, read at tap_input[t] + c
// (offset added by SXTAB16), times the widened weights w[2t], w[2t+1] (kernels_dsp.h), for
// `taps` >= 1 taps: 10.5 instructions per tap and four multiply-accumulates. Written out
// because GCC spills here; the loop body holds two taps, an odd count enters at the second
// (as in mac_groups) and the loop end stays in memory since every register is taken.
inline void dw_taps(int32_t taps, const int8_t* const* tap_input, int32_t c, const int32_t* w, int32_t offset_pair,
                    int32_t& a0, int32_t& a1, int32_t& a2, int32_t& a3) {
  const int32_t* const w_end = w + 2 * taps;
  const int32_t odd_taps = taps & 1;
  int32_t even, odd, w_even, w_odd;  // `even` also holds the tap's input pointer and loop values
#define MCUFLOW_DSP_DW_TAP                                         \
  "ldr %[even], [%[tap_input]], #4\n\t"                            \
  "ldr %[odd], [%[even], %[c]]\n\t"                                \
  "ldrd %[w_even], %[w_odd], [%[w]], #8\n\t"                       \
  "sxtab16 %[even], %[offset_pair], %[odd]\n\t"                    \
  "sxtab16 %[odd], %[offset_pair], %[odd], ror #8\n\t"             \
  "smlabb %[a0], %[even], %[w_even], %[a0]\n\t"                    \
  "smlatt %[a2], %[even], %[w_even], %[a2]\n\t"                    \
  "smlabb %[a1], %[odd], %[w_odd], %[a1]\n\t"                      \
  "smlatt %[a3], %[odd], %[w_odd], %[a3]\n\t"
  __asm__(
      "ldr %[even], %[odd_taps]\n\t"
      "cmp %[even], #0\n\t"
      "bne 2f\n\t"
      "1:\n\t" MCUFLOW_DSP_DW_TAP
      "2:\n\t" MCUFLOW_DSP_DW_TAP
      "ldr %[even], %[w_end]\n\t"
      "cmp %[w], %[even]\n\t"
      "bne 1b"
      : [a0] "+r"(a0), [a1] "+r"(a1), [a2] "+r"(a2), [a3] "+r"(a3), [tap_input] "+r"(tap_input), [w] "+r"(w),
        [even] "=&r"(even), [odd] "=&r"(odd), [w_even] "=&r"(w_even), [w_odd] "=&r"(w_odd)
      : [c] "r"(c), [offset_pair] "r"(offset_pair), [odd_taps] "m"(odd_taps), [w_end] "m"(w_end)
      : "cc", "memory");
#undef MCUFLOW_DSP_DW_TAP
}

// Depthwise 3x3 (kernels_dsp.h, dwconv_s8_3x3_dsp), one output row for `channels` channels:
// channel k's kernel rows start at r0, r1, r2 + k * channel_step (int16 rows, column 0); its
// weight pairs are w[6k..6k+5]. For `pairs` >= 1 pairs of output pixels, then one more pixel
// when `odd`, the three rows' sums go to acc (two int32 per pair and for the odd pixel,
// channel after channel). Per kernel row a pair x, x+1 takes two words, A = (x, x+1) and
// C = (x+2, x+3): pixel x is SMLAD(A, (w0, w1)) + C.bottom * w2, pixel x+1 is
// A.top * w0 + SMLAD(C, (w1, w2)): 22 instructions per pair and 18 multiply-accumulates, 13
// for the odd pixel and its nine, 14 more per channel. Written out because GCC spills the
// weights here; loop ends stay in memory since every register is taken.
inline void dw3_output_row(int32_t channels, int32_t pairs, bool odd, const int16_t* r0, const int16_t* r1,
                           const int16_t* r2, int32_t channel_step, const int32_t* w, int32_t* acc) {
  // Between channels the row pointers, which moved 4 bytes per pair, go on to the next channel.
  const int32_t row_advance = 2 * channel_step - 4 * pairs, pair_bytes = 8 * pairs, odd_pixel = odd;
  const int32_t* const w_end = w + kDspDw3WeightWords * channels;
  int32_t* acc_end;
  // (wy0, wy1) and (wy1, wy2) of kernel row y, in the order LDMIA fills them.
  register int32_t p0 __asm__("r4"), q0 __asm__("r5"), p1 __asm__("r6"), q1 __asm__("r8"), p2 __asm__("r9"),
      q2 __asm__("r10");
  int32_t a0, a1, t;
#define MCUFLOW_DSP_DW3_ROW(row, p, q)                       \
  "ldr %[t], [%[" row "]]\n\t"                               \
  "smlad %[a0], %[t], %[" p "], %[a0]\n\t"                   \
  "smlatb %[a1], %[t], %[" p "], %[a1]\n\t"                  \
  "ldr %[t], [%[" row "], #4]!\n\t" /* on to the next pair */ \
  "smlabt %[a0], %[t], %[" q "], %[a0]\n\t"                  \
  "smlad %[a1], %[t], %[" q "], %[a1]\n\t"
#define MCUFLOW_DSP_DW3_ODD_ROW(row, p, q)                   \
  "ldr %[t], [%[" row "]]\n\t"                               \
  "smlad %[a0], %[t], %[" p "], %[a0]\n\t"                   \
  "ldr %[t], [%[" row "], #4]\n\t"                           \
  "smlabt %[a0], %[t], %[" q "], %[a0]\n\t"
  __asm__ volatile(  // volatile: its result is in memory, not in the outputs
      "0:\n\t"
      "ldmia %[w]!, {%[p0], %[q0], %[p1], %[q1], %[p2], %[q2]}\n\t"
      "ldr %[t], %[pair_bytes]\n\t"
      "add %[t], %[t], %[acc]\n\t"
      "str %[t], %[acc_end]\n\t"
      "1:\n\t"
      "ldr %[t], [%[r0]]\n\t"  // kernel row 0 starts the sums
      "smuad %[a0], %[t], %[p0]\n\t"
      "smultb %[a1], %[t], %[p0]\n\t"
      "ldr %[t], [%[r0], #4]!\n\t"
      "smlabt %[a0], %[t], %[q0], %[a0]\n\t"
      "smlad %[a1], %[t], %[q0], %[a1]\n\t"
      MCUFLOW_DSP_DW3_ROW("r1", "p1", "q1") MCUFLOW_DSP_DW3_ROW("r2", "p2", "q2")
      "strd %[a0], %[a1], [%[acc]], #8\n\t"
      "ldr %[t], %[acc_end]\n\t"
      "cmp %[acc], %[t]\n\t"
      "bne 1b\n\t"
      "ldr %[t], %[odd_pixel]\n\t"
      "cmp %[t], #0\n\t"
      "beq 2f\n\t"
      "ldr %[t], [%[r0]]\n\t"  // the odd pixel
      "smuad %[a0], %[t], %[p0]\n\t"
      "ldr %[t], [%[r0], #4]\n\t"
      "smlabt %[a0], %[t], %[q0], %[a0]\n\t"
      MCUFLOW_DSP_DW3_ODD_ROW("r1", "p1", "q1") MCUFLOW_DSP_DW3_ODD_ROW("r2", "p2", "q2")
      "str %[a0], [%[acc]], #8\n\t"
      "2:\n\t"
      "ldr %[t], %[row_advance]\n\t"
      "add %[r0], %[r0], %[t]\n\t"
      "add %[r1], %[r1], %[t]\n\t"
      "add %[r2], %[r2], %[t]\n\t"
      "ldr %[t], %[w_end]\n\t"
      "cmp %[w], %[t]\n\t"
      "bne 0b"
      : [r0] "+r"(r0), [r1] "+r"(r1), [r2] "+r"(r2), [acc] "+r"(acc), [w] "+r"(w), [a0] "=&r"(a0), [a1] "=&r"(a1),
        [t] "=&r"(t), [p0] "=&r"(p0), [q0] "=&r"(q0), [p1] "=&r"(p1), [q1] "=&r"(q1), [p2] "=&r"(p2), [q2] "=&r"(q2),
        [acc_end] "=m"(acc_end)
      : [pair_bytes] "m"(pair_bytes), [row_advance] "m"(row_advance), [w_end] "m"(w_end), [odd_pixel] "m"(odd_pixel)
      : "cc", "memory");
#undef MCUFLOW_DSP_DW3_ROW
#undef MCUFLOW_DSP_DW3_ODD_ROW
}

// The output tensor's offset and activation clamp, and the window size (for dsp_fast_channel).
struct Output {
  int32_t offset, act_min, act_max;
  int64_t depth;
};

// True when every channel takes the fast requantization and the clamp is int8's own range:
// kernels then run their kFast variant, which needs no per-output tests.
inline bool fast_outputs(const Output& o, const DspTables& t, int32_t count) {
  if (o.act_min != -128 || o.act_max != 127) return false;
  for (int32_t c = 0; c < count; ++c) {
    if (!dsp_fast_channel(t.bias[c], t.shifts[c * t.step], o.depth)) return false;
  }
  return true;
}

// Channel c's requantization, from the reference's tables.
template <bool kFast>
inline DspChannel channel(const DspTables& t, int32_t c, const Output& o) {
  const int32_t q = c * t.step;
  if (kFast) return dsp_fast_channel_of(t.bias[c], t.multipliers[q], t.shifts[q], 2 * o.offset + 1);
  return dsp_channel(t.bias[c], t.multipliers[q], t.shifts[q], o.offset, o.depth);
}

// Channel c's accumulator start (DspChannel::acc_init) alone: kernels load it before their
// multiply loops and the rest of the channel after them, as those loops take every register.
template <bool kFast>
inline int32_t acc_start(const DspTables& t, int32_t c, const Output& o) {
  return kFast ? 2 * t.bias[c] : channel<kFast>(t, c, o).acc_init;
}

// The output value (in int8 range) of a doubled accumulator started at ch.acc_init.
template <bool kFast>
inline int32_t output_value(int32_t acc2, const DspChannel& ch, const Output& o) {
  if (kFast) return __ssat(dsp_requantize_fast(acc2, ch), 8);
  return clamp_i32(dsp_requantize(acc2, ch, o.offset), o.act_min, o.act_max);
}

// The same for channel c of the tables.
template <bool kFast>
inline int32_t channel_value(int32_t acc2, const DspTables& t, int32_t c, const Output& o) {
  return output_value<kFast>(acc2, channel<kFast>(t, c, o), o);
}

// Four output values (int8 range) as the bytes of a word, v0 lowest.
inline uint32_t pack4(int32_t v0, int32_t v1, int32_t v2, int32_t v3) {
  const uint32_t even = __uxtb16((uint32_t(v0) & 0xFFFFu) | (uint32_t(v2) << 16));  // PKHBT, UXTB16
  const uint32_t odd = __uxtb16((uint32_t(v1) & 0xFFFFu) | (uint32_t(v3) << 16));
  return even | (odd << 8);
}

// Requantizes and stores one channel's kDspPixels accumulators (count of them valid) at
// dst[i * stride].
template <bool kFast>
inline void store_channel(const DspChannel& ch, const Output& o, const int32_t (&acc)[kDspPixels], int32_t count,
                          int8_t* dst, int32_t stride) {
  auto value = [&](int32_t acc2) { return int8_t(output_value<kFast>(acc2, ch, o)); };
  if (count == kDspPixels) {  // the common case, without per-pixel tests
    dst[0] = value(acc[0]);
    dst += stride;
    dst[0] = value(acc[1]);
    dst += stride;
    dst[0] = value(acc[2]);
    dst[stride] = value(acc[3]);
  } else {
    for (int32_t i = 0; i < count; ++i) dst[i * stride] = value(acc[i]);
  }
}

// For every output channel: its weight row (depth int8 values, depth >= 4) times the block's
// kDspPixels expanded windows, requantized; `count` pixels are stored, pixel i at out + i * out_c.
template <bool kFast>
inline void conv_block(int32_t depth, int32_t out_c, const Output& o, const DspTables& t, const int16_t* scratch,
                       const int8_t* weights, int32_t count, int8_t* out) {
  const int32_t groups = depth >> 2, tail = depth & 3;
  for (int32_t oc = 0; oc < out_c; ++oc, ++out) {
    int32_t stride = out_c;
    __asm__("" : "+r"(stride));  // opaque: GCC would keep a pointer per output pixel on the stack
    int32_t a0 = acc_start<kFast>(t, oc, o), a1 = a0, a2 = a0, a3 = a0;
    const int32_t* x = reinterpret_cast<const int32_t*>(scratch);
    mac_groups(groups, weights, x, a0, a1, a2, a3);
    if (tail) {  // the row's last `tail` weights, read as the top bytes of its last word
      mac_group(int32_t(uint32_t(read_word(weights + tail - 4)) >> (32 - 8 * tail)), x, a0, a1, a2, a3);
      weights += tail;
    }
    const int32_t acc[kDspPixels] = {a0, a1, a2, a3};
    store_channel<kFast>(channel<kFast>(t, oc, o), o, acc, count, out, stride);
  }
}

// a, b += one expanded row (a SlotWriter<1> scratch, x at its first group) times the weight
// rows at wa and wb, over `groups` >= 1 groups of four, advancing x, wa and wb: 25
// instructions per two groups and 16 multiply-accumulates. Written out for the same reasons
// as mac_groups, with the same odd-count entry.
inline void row_pair_groups(int32_t groups, const int32_t*& x, const int8_t*& wa, const int8_t*& wb, int32_t& a,
                            int32_t& b) {
  int32_t x_even, x_odd, w, w_even;
#define MCUFLOW_DSP_ROW_PAIR_GROUP                                 \
  "ldrd %[x_even], %[x_odd], [%[x]], #8\n\t"                       \
  "ldr %[w], [%[wa]], #4\n\t"                                      \
  "sxtb16 %[w_even], %[w]\n\t"                                     \
  "sxtb16 %[w], %[w], ror #8\n\t"                                  \
  "smlad %[a], %[x_even], %[w_even], %[a]\n\t"                     \
  "smlad %[a], %[x_odd], %[w], %[a]\n\t"                           \
  "ldr %[w], [%[wb]], #4\n\t"                                      \
  "sxtb16 %[w_even], %[w]\n\t"                                     \
  "sxtb16 %[w], %[w], ror #8\n\t"                                  \
  "smlad %[b], %[x_even], %[w_even], %[b]\n\t"                     \
  "smlad %[b], %[x_odd], %[w], %[b]\n\t"
  __asm__(
      "subs %[groups], %[groups], #1\n\t"
      "lsrs %[groups], %[groups], #1\n\t"
      "bcc 2f\n\t"
      "1:\n\t" MCUFLOW_DSP_ROW_PAIR_GROUP
      "2:\n\t" MCUFLOW_DSP_ROW_PAIR_GROUP
      "subs %[groups], %[groups], #1\n\t"
      "bpl 1b"
      : [a] "+r"(a), [b] "+r"(b), [groups] "+r"(groups), [x] "+r"(x), [wa] "+r"(wa), [wb] "+r"(wb),
        [x_even] "=&r"(x_even), [x_odd] "=&r"(x_odd), [w] "=&r"(w), [w_even] "=&r"(w_even)
      :
      : "cc", "memory");
#undef MCUFLOW_DSP_ROW_PAIR_GROUP
}

// One row (a SlotWriter<1> scratch, depth >= 4 values) times every weight row, requantized into
// out[0..out_c): two output channels per pass share each expanded input word (an odd last
// channel pairs with itself).
template <bool kFast>
inline void single_row(int32_t depth, int32_t out_c, const Output& o, const DspTables& t, const int16_t* scratch,
                       const int8_t* weights, int8_t* out) {
  const int32_t groups = depth >> 2, tail = depth & 3;
  for (int32_t oc = 0; oc < out_c; oc += 2) {
    const int32_t ob = oc + 1 < out_c ? oc + 1 : oc;
    const int8_t* wa = weights + oc * depth;
    const int8_t* wb = weights + ob * depth;
    int32_t a = acc_start<kFast>(t, oc, o), b = acc_start<kFast>(t, ob, o);
    const int32_t* x = reinterpret_cast<const int32_t*>(scratch);
    row_pair_groups(groups, x, wa, wb, a, b);
    if (tail) {  // the rows' last `tail` weights, read as the top bytes of their last words
      const int32_t shift = 32 - 8 * tail;
      const int32_t last_a = int32_t(uint32_t(read_word(wa + tail - 4)) >> shift);
      const int32_t last_b = int32_t(uint32_t(read_word(wb + tail - 4)) >> shift);
      a = __smlad(x[1], sxtb16_odd(last_a), __smlad(x[0], __sxtb16(last_a), a));
      b = __smlad(x[1], sxtb16_odd(last_b), __smlad(x[0], __sxtb16(last_b), b));
    }
    out[oc] = int8_t(output_value<kFast>(a, channel<kFast>(t, oc, o), o));
    out[ob] = int8_t(output_value<kFast>(b, channel<kFast>(t, ob, o), o));
  }
}

// The conv kernels' pixel loop: blocks of kDspPixels output pixels in output order, each slot
// filled by expand(oy, ox, slot), then conv_block.
template <bool kFast, typename Expand>
inline void conv_pixel_blocks(const ConvParams& p, const Output& o, const DspTables& t, const int8_t* weights,
                              const int16_t* scratch, int8_t* output, Expand expand) {
  const int32_t pixels = p.out_h * p.out_w;
  int32_t oy = 0, ox = 0;  // the next output pixel
  for (int32_t first = 0; first < pixels; first += kDspPixels) {
    const int32_t count = pixels - first < kDspPixels ? pixels - first : kDspPixels;
    for (int32_t slot = 0; slot < count; ++slot) {
      expand(oy, ox, slot);
      if (++ox == p.out_w) ox = 0, ++oy;
    }
    conv_block<kFast>(int32_t(o.depth), p.out_c, o, t, scratch, weights, count, output + first * p.out_c);
  }
}

template <typename Expand>
inline void conv_pixels(const ConvParams& p, int32_t depth, const int8_t* weights, const DspTables& t,
                        const int16_t* scratch, int8_t* output, Expand expand) {
  const Output o{p.output_offset, p.act_min, p.act_max, depth};
  if (fast_outputs(o, t, p.out_c)) {
    conv_pixel_blocks<true>(p, o, t, weights, scratch, output, expand);
  } else {
    conv_pixel_blocks<false>(p, o, t, weights, scratch, output, expand);
  }
}

}  // namespace mcuflow::kernels::dsp
#endif  // __ARM_FEATURE_DSP
