// Scalar-tier kernels: Armv6-M Thumb-1 code (Cortex-M0/M0+, and every later M-profile core).
// Each computes bit for bit what its reference kernel computes from the same params and leading
// inputs, using constant inputs the compiler prepared (compiler/src/tiers/scalar_rules.cpp) with
// the functions below; the adapters (runtime/src/ops/scalar/) recompute them when a program is
// loaded.
//
// Armv6-M has no multiply-accumulate, LDRSB only with a register offset, and eight low
// registers for most ALU operations; what pays there:
//   - the input offset folded into the bias: bias' = bias + input_offset * sum(w) (padding taps
//     read the input zero point, so they contribute nothing), leaving load, multiply, add;
//   - two products per multiply (GEMM kernels): a weight word holds two output channels' int16
//     weights, w_a + w_b * 2^16, so x * word = x * w_a + (x * w_b) * 2^16 (mod 2^32). Two such
//     products (two window positions) add up to P + Q * 2^16 with |P|, |Q| <= 2 * 128 * 127 <
//     2^15, so P is the word's low half sign-extended and Q the rest shifted down: four
//     multiplies give eight multiply-accumulates of a group of four output channels;
//   - weights re-laid out at compile time in the order the loop reads them (one LDM per two
//     window positions), accumulators in r8-r11, inputs by LDRB with immediate offsets;
//   - requantization without the 64-bit product the reference's needs (below).
// Accumulators wrap like the reference's int32 arithmetic (which the verifier keeps in range),
// so the folded sums equal the reference's exactly.
//
// Each kernel's contract (tier_contract.h): its input slots, scratch size and the params it
// refuses (<kernel>_refusal), next to its declaration.
#pragma once
#include <cstdint>
#include "mcuflow/kernels/arith.h"
#include "mcuflow/kernels/elementwise_tiers.h"
#include "mcuflow/kernels/params.h"
#include "mcuflow/kernels/tier_contract.h"

namespace mcuflow::kernels {

constexpr int32_t kScalarGroup = 4;  // output channels per pass of the GEMM kernels

// --- requantization without a 64-bit product (Armv6-M multiplies 32x32 -> 32 only) ---

// sat_rounding_doubling_high_mul(x, m) = floor((x * m + 2^30) / 2^31) for m in [0, 2^31) (the
// verifier's multiplier range; m >= 0 never saturates), from four 16x16-bit products. With
// x = xh * 2^16 + xl (xh = x >> 16 signed, xl < 2^16) and m = mh * 2^16 + ml (mh < 2^15):
//   x * m + 2^30 = 2^32 * xh * mh + 2^16 * (c1 + c2 + 2^14) + lo,
//   c1 = xh * ml in (-2^31, 2^31), c2 = xl * mh < 2^31 - 2^16, lo = xl * ml < 2^32 (unsigned),
// so the quotient is 2 * xh * mh + floor(s / 2^15) with s = c1 + u, u = c2 + 2^14 + (lo >> 16)
// (nested floors of divisions by powers of two compose). u < 2^31 but s may not fit int32, so
// floor(s / 2^15) = (u >> 15) + ((c1 + (u & 0x7FFF)) >> 15), whose operand is below 2^31 in
// magnitude. The terms add up, wrapping, to the true quotient, which fits int32.
inline int32_t scalar_doubling_high_mul(int32_t x, uint32_t mh, uint32_t ml) {
  const int32_t xh = x >> 16;
  const uint32_t xl = uint32_t(x) & 0xFFFFu;
  const int32_t c1 = xh * int32_t(ml);
  const uint32_t u = xl * mh + (1u << 14) + ((xl * ml) >> 16);
  const int32_t low = (c1 + int32_t(u & 0x7FFFu)) >> 15;
  return int32_t(uint32_t(2 * xh * int32_t(mh)) + (u >> 15) + uint32_t(low));
}

// The same for |x| <= 2^15, from two products: with m = mh * 2^16 + ml, x * mh and x * ml fit
// int32 (|x * mh| < 2^30, |x * ml| < 2^31) and floor((x * m + 2^30) / 2^31) =
// floor((x * mh + 2^14 + floor(x * ml / 2^16)) / 2^15) (nested floors; 2^16 divides x * mh * 2^16).
constexpr int32_t kScalarShortProduct = 1 << 15;
inline int32_t scalar_doubling_high_mul_short(int32_t x, uint32_t mh, uint32_t ml) {
  return (x * int32_t(mh) + (1 << 14) + ((x * int32_t(ml)) >> 16)) >> 15;
}

// A channel's requantization as the kernels read it, six int32 words: the multiplier's low and
// high 16 bits, the left shift max(shift, 0), the right shift e = max(-shift, 0), and two
// constants the Thumb-1 sequence would otherwise build with three instructions each (one load
// instead): the remainder mask 2^e - 1 and the high multiply's rounding term 2^14.
constexpr int32_t kScalarRequantWords = 6;
inline int32_t scalar_requant_word(int32_t multiplier, int32_t shift, int32_t j) {
  const int32_t right = shift > 0 ? 0 : -shift;
  switch (j) {
    case 0: return multiplier & 0xFFFF;
    case 1: return int32_t(uint32_t(multiplier) >> 16);
    case 2: return shift > 0 ? shift : 0;
    case 3: return right;
    case 4: return int32_t((uint32_t{1} << right) - 1u);
    default: return 1 << 14;
  }
}

// multiply_by_quantized_multiplier (arith.h) from a channel's words q: equal for every x and
// every multiplier in [0, 2^31), shift in [-31, 30].
inline int32_t scalar_requantize(int32_t x, const int32_t* q) {
  return rounding_divide_by_pot(scalar_doubling_high_mul(wrapping_left_shift(x, q[2]), uint32_t(q[1]), uint32_t(q[0])),
                                q[3]);
}

// --- GEMM-shaped kernels (1x1 conv, im2col conv): out[row][oc] over depth window values ---

inline int32_t scalar_groups(int32_t out_c) { return (out_c + kScalarGroup - 1) / kScalarGroup; }
// The packed sums' bound needs weights in -127..127 (the int8 quantization's range); true when
// none of the n weights is -128.
inline bool scalar_weights_symmetric(const int8_t* weights, int32_t n) {
  for (int32_t i = 0; i < n; ++i) {
    if (weights[i] == -128) return false;
  }
  return true;
}

// Weight word j < 2 * depth of group g (four output channels; a last partial group repeats its
// last channel): for each pair of window positions k, k + 1 the words (ch0, ch1 at k),
// (ch2, ch3 at k), (ch0, ch1 at k + 1), (ch2, ch3 at k + 1), then for an odd depth (ch0, ch1),
// (ch2, ch3) at the last position; (a, b) = w[a][k] + w[b][k] * 2^16 (mod 2^32: a negative
// w[a][k] borrows from the upper half). weights: [out_c][depth].
inline int32_t scalar_group_weight_word(const int8_t* weights, int32_t out_c, int32_t depth, int32_t g, int32_t j) {
  const int32_t pairs = depth / 2, slot = j % 4;
  const int32_t k = j < 4 * pairs ? 2 * (j / 4) + slot / 2 : depth - 1;
  const int32_t first = g * kScalarGroup + 2 * (j < 4 * pairs ? slot % 2 : slot);
  const int32_t a = first < out_c ? first : out_c - 1, b = first + 1 < out_c ? first + 1 : out_c - 1;
  return int32_t((uint32_t(weights[b * depth + k]) << 16) + uint32_t(weights[a * depth + k]));
}

// bias' for output channel oc: bias[oc] + input_offset * sum_k w[oc][k], wrapping like int32.
inline int32_t scalar_folded_bias(const int8_t* weights, const int32_t* bias, int32_t depth, int32_t input_offset,
                                  int32_t oc) {
  int32_t sum = 0;
  for (int32_t k = 0; k < depth; ++k) sum += weights[oc * depth + k];
  return int32_t(uint32_t(bias[oc]) + uint32_t(input_offset) * uint32_t(sum));
}

// The GEMM kernels' prepared input, int32 words: each output channel's requantization words
// (scalar_requant_word; channel c reads the reference's tables at c * requant_step: 0 for a
// per-tensor fully connected layer), then per group of four output channels its bias' (four
// words, as the group's channels) and its 2 * depth weight words, in the order the kernels read.
inline int32_t scalar_gemm_group_words(int32_t depth) { return kScalarGroup + 2 * depth; }
inline int32_t scalar_gemm_prepared_words(int32_t out_c, int32_t depth) {
  return out_c * kScalarRequantWords + scalar_groups(out_c) * scalar_gemm_group_words(depth);
}
inline int32_t scalar_gemm_prepared_word(const int8_t* weights, const int32_t* bias, const int32_t* multipliers,
                                         const int32_t* shifts, int32_t requant_step, int32_t out_c, int32_t depth,
                                         int32_t input_offset, int32_t i) {
  if (i < out_c * kScalarRequantWords) {
    const int32_t c = i / kScalarRequantWords * requant_step;
    return scalar_requant_word(multipliers[c], shifts[c], i % kScalarRequantWords);
  }
  i -= out_c * kScalarRequantWords;
  const int32_t g = i / scalar_gemm_group_words(depth), j = i % scalar_gemm_group_words(depth);
  if (j >= kScalarGroup) return scalar_group_weight_word(weights, out_c, depth, g, j - kScalarGroup);
  const int32_t oc = g * kScalarGroup + j < out_c ? g * kScalarGroup + j : out_c - 1;
  return scalar_folded_bias(weights, bias, depth, input_offset, oc);
}

// The GEMM and depthwise kernels' inputs: the reference's, then the prepared input (which they
// read instead of the weights), then the 1x1 conv's row, conv_s8_scalar's window or dwconv_s8_scalar's tap scratch.
constexpr uint8_t kScalarPreparedSlot = kWeightedSlots, kScalarWindowSlot = kScalarPreparedSlot + 1;

// 1x1 conv without padding, any stride; prepared: scalar_gemm_prepared_word. Each input pixel is
// widened to int32 into `row` (an arena scratch of scalar_pointwise_row_bytes), which every group
// of four output channels then reads two values per LDM.
inline Refusal conv_s8_1x1_scalar_refusal(const ConvParams& p) { return pointwise_refusal(p); }
inline int64_t scalar_pointwise_row_bytes(const ConvParams& p) { return int64_t(p.in_c) * 4; }
void conv_s8_1x1_scalar(const ConvParams& p, const int8_t* input, const int32_t* prepared, int32_t* row,
                        int8_t* output);

// Any conv, grouped or not: per output pixel and group, the group's window (k_h * k_w *
// in_c / groups values, padding taps = the input zero point) is gathered, widened to int32, into
// `window` (an arena scratch of scalar_conv_window_bytes), then as the 1x1 conv's pixel times the group's out_c / groups
// channels. Prepared: per group, scalar_gemm_prepared_word of that group's weights and tables.
inline int32_t scalar_conv_depth(const ConvParams& p) { return p.k_h * p.k_w * (p.in_c / p.groups); }
inline int64_t scalar_conv_window_bytes(const ConvParams& p) { return int64_t(scalar_conv_depth(p)) * 4; }
inline int32_t scalar_conv_group_words(const ConvParams& p) {
  return scalar_gemm_prepared_words(p.out_c / p.groups, scalar_conv_depth(p));
}
inline int32_t scalar_conv_prepared_words(const ConvParams& p) { return p.groups * scalar_conv_group_words(p); }
inline int32_t scalar_conv_prepared_word(const ConvParams& p, const int8_t* weights, const int32_t* bias,
                                         const int32_t* multipliers, const int32_t* shifts, int32_t i) {
  const int32_t group_out = p.out_c / p.groups, depth = scalar_conv_depth(p), words = scalar_conv_group_words(p);
  const int32_t first = i / words * group_out;  // the group's first output channel
  return scalar_gemm_prepared_word(weights + first * depth, bias + first, multipliers + first, shifts + first, 1,
                                   group_out, depth, p.input_offset, i % words);
}
void conv_s8_scalar(const ConvParams& p, const int8_t* input, const int32_t* prepared, int32_t* window,
                    int8_t* output);

// Fully connected: each of the `rows` input rows as the 1x1 conv's input pixel; prepared:
// scalar_gemm_prepared_word with depth in_c, requant_step per_channel.
void fc_s8_scalar(const FcParams& p, const int8_t* input, const int32_t* prepared, int8_t* output);

// --- depthwise conv, ch_mult 1: dwconv_s8_3x3_scalar, dwconv_s8_scalar ---

// Prepared input of both kernels, int32 words: per channel c, bias' (bias + input_offset * sum
// of its k_h * k_w weights), those weights [ky][kx] and its requantization words
// (scalar_requant_word), in the order the kernels read them (one pointer walks all); then in_c
// bytes of the input zero point (four per word, zero padded), which padding taps read so that
// they contribute nothing. weights: the reference's [k_h][k_w][in_c].
inline int32_t scalar_dw_taps(const DwConvParams& p) { return p.k_h * p.k_w; }
inline int32_t scalar_dw_channel_words(const DwConvParams& p) { return 1 + scalar_dw_taps(p) + kScalarRequantWords; }
inline int32_t scalar_dw_prepared_words(const DwConvParams& p) {
  return p.in_c * scalar_dw_channel_words(p) + (p.in_c + 3) / 4;
}
inline int32_t scalar_dw_prepared_word(const DwConvParams& p, const int8_t* weights, const int32_t* bias,
                                       const int32_t* multipliers, const int32_t* shifts, int32_t i) {
  const int32_t channels = p.in_c, taps = scalar_dw_taps(p), channel_words = scalar_dw_channel_words(p);
  if (i < channels * channel_words) {
    const int32_t c = i / channel_words, t = i % channel_words;
    if (t > taps) return scalar_requant_word(multipliers[c], shifts[c], t - 1 - taps);
    if (t > 0) return weights[(t - 1) * channels + c];
    int32_t sum = 0;
    for (int32_t tap = 0; tap < taps; ++tap) sum += weights[tap * channels + c];
    return int32_t(uint32_t(bias[c]) + uint32_t(p.input_offset) * uint32_t(sum));
  }
  const uint32_t zero_point = uint8_t(-p.input_offset);  // the zero point row
  uint32_t word = 0;
  for (int32_t b = 0, first = (i - channels * channel_words) * 4; b < 4 && first + b < channels; ++b)
    word |= zero_point << (8 * b);
  return int32_t(word);
}

// 3x3, any stride, padding and dilation: per pixel nine tap pointers, a channel's taps written
// out.
constexpr int32_t kScalarDwTaps = 9;
inline Refusal dwconv_s8_3x3_scalar_refusal(const DwConvParams& p) {
  if (p.k_h != 3 || p.k_w != 3) return Refusal::kKernelSize;
  return unit_multiplier_refusal(p);
}
void dwconv_s8_3x3_scalar(const DwConvParams& p, const int8_t* input, const int32_t* prepared, int8_t* output);

// Any window (5x5 in MobileNetV3, MnasNet, EfficientNet), stride, padding and dilation: per pixel
// the k_h * k_w tap addresses in `taps` (an arena scratch of scalar_dw_taps_bytes), a channel's
// taps two per loop pass.
inline Refusal dwconv_s8_scalar_refusal(const DwConvParams& p) { return unit_multiplier_refusal(p); }
inline int64_t scalar_dw_taps_bytes(const DwConvParams& p) { return int64_t(scalar_dw_taps(p)) * 4; }  // 32-bit
void dwconv_s8_scalar(const DwConvParams& p, const int8_t* input, const int32_t* prepared, uintptr_t* taps,
                      int8_t* output);

// --- pooling ---

// avgpool_s8_scalar divides by a window's count n (1 <= n <= k_h * k_w) without a divider:
// floor(x / n) for x = |sum| + n / 2 <= 128 n + n / 2 is (x * R) >> 24 with R = ceil(2^24 / n),
// a 32-bit MULS (x * R < 128.5 * (2^24 + n) < 2^32). Exact when x * (R n - 2^24) < 2^24, and
// R n - 2^24 <= n - 1: so for every n up to kScalarPoolMaxCount ((128 n + n / 2)(n - 1) < 2^24).
// Prepared input: int32 R for n = 1 ... k_h * k_w, after the reference's input.
constexpr int32_t kScalarPoolMaxCount = 361;
constexpr uint8_t kScalarPoolReciprocalSlot = 1;
inline Refusal avgpool_s8_scalar_refusal(const PoolParams& p) {
  return int64_t(p.k_h) * p.k_w > kScalarPoolMaxCount ? Refusal::kPoolWindow : Refusal::kNone;
}
constexpr int32_t kScalarReciprocalShift = 24;
inline int32_t scalar_pool_reciprocal(int32_t n) {
  return int32_t(((uint32_t(1) << kScalarReciprocalShift) + uint32_t(n) - 1) / uint32_t(n));
}
void avgpool_s8_scalar(const PoolParams& p, const int8_t* input, const int32_t* reciprocals, int8_t* output);
// Nothing prepared.
void maxpool_s8_scalar(const PoolParams& p, const int8_t* input, int8_t* output);
// Sum and mean (reduce_sum_refusal, tier_contract.h): the reference's input; never in place.
void reduce_s8_scalar(const ReduceParams& p, const int8_t* input, int8_t* output);

// Softmax: the reference's input, then the exp table (constant int32 [kSoftmaxTableEntries],
// softmax_exp_table_entry, softmax_table.h). Each element is read before it is written.
void softmax_s8_scalar(const SoftmaxParams& p, const int8_t* input, const int32_t* exp_table, int8_t* output);

// --- element-wise: add, mul, clamp, requantize; every element read before it is written ---

// add_s8_scalar's prepared input, int32 words: word t * kByteValues + b is the reference's
// rescaled input t (0: input 1, 1: input 2) for the int8 of byte b (add_rescaled_input,
// elementwise_tiers.h), an int32. The reference's `combined` is the sum of one word of each, so
// the kernel needs no multiply before the output's requantization.
constexpr int32_t kScalarAddTableWords = 2 * kByteValues;
inline int32_t scalar_add_table_word(const BinaryParams& p, int32_t i) {
  return int32_t(add_rescaled_input(p, i / kByteValues, i % kByteValues));
}
void add_s8_scalar(const BinaryParams& p, const int8_t* input1, const int8_t* input2, const int32_t* tables,
                   int8_t* output);

// mul_s8: the product of the offset inputs (|product| <= 255 * 255) requantized from 16x16-bit
// products (scalar_requantize); nothing prepared.
void mul_s8_scalar(const BinaryParams& p, const int8_t* input1, const int8_t* input2, int8_t* output);

// clamp_s8: four bytes per word, compared without a multiply or a branch (SWAR).
void clamp_s8_scalar(const ClampParams& p, const int8_t* input, int8_t* output);

// requantize_s8 is a function of one int8: table (constant int8 [kByteValues]) holds
// requantize_table_entry (elementwise_tiers.h) for each byte.
void requantize_s8_scalar(const RequantizeParams& p, const int8_t* input, const int8_t* table, int8_t* output);
// lut_s8: the reference's inputs (the 256-entry table, entry b + 128 for input b), nothing prepared.
void lut_s8_scalar(const LutParams& p, const int8_t* input, const int8_t* table, int8_t* output);

// --- cat slice and strided copy: the references' params and inputs; in place as they are ---
// concat_slice_s8: a slice that requantizes also takes its table (input kRequantizeTableSlot,
// constant int8 [kByteValues], concat_requantize_table_entry, elementwise_tiers.h); a plain copy
// takes nothing more (table null). strided_copy_b8: nothing prepared; rows of unit step move as
// blocks, other rows element by element as the reference does. Each block is read before it is
// written, so a copy onto its own source (the planner's in-place slices) stays correct.
void concat_slice_s8_scalar(const ConcatSliceParams& p, const int8_t* input, const int8_t* table, int8_t* output);
void strided_copy_b8_scalar(const StridedCopyParams& p, const int8_t* input, int8_t* output);
// lut_s16: the reference's inputs (the compiler's 513-entry table, lut_s16.h) and check, nothing
// prepared; the table indexed from its middle by x >> 7.
void lut_s16_scalar(const LutParams& p, const int16_t* input, const int16_t* table, int16_t* output);
// softmax_s16: the reference's inputs (the compiler's exp table, softmax_s16.h) and check.
void softmax_s16_scalar(const SoftmaxS16Params& p, const int16_t* input, const int16_t* exp_table, int16_t* output);
// permute_b8_scalar: the reference's inputs, any permutation (permute_walk.h).
void permute_b8_scalar(const PermuteParams& p, const int8_t* input, int8_t* output);

// dequantize_s8_f32_scalar: the reference's input, then the 256 outputs' bits
// (elementwise_tiers.h dequantize_table_entry) at kDequantizeTableSlot.
void dequantize_s8_f32_scalar(const QuantizeParams& p, const int8_t* input, const uint32_t* table, float* output);

}  // namespace mcuflow::kernels
