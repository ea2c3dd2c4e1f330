// Flat parameter structs, one per kernel family. The compiler fills them ahead of time and
// stores them in the program; kernels only read them. Layout is NHWC, batch 1. All fields are
// 32-bit so the structs have no padding and the same bytes on host and device; their sizes are
// asserted at the end of this file.
#pragma once
#include <cstdint>

namespace mcuflow::kernels {

// The most dims a program tensor (and a permute or strided_copy) may have, and the largest size
// of one dim (and of a kernel's extents); the program format (format::kMaxRank, kMaxDim) uses
// these one definitions.
inline constexpr uint32_t kMaxRank = 6;
inline constexpr int32_t kMaxDim = 1 << 16;

// Requantization of an accumulator to int8 or int16 (docs/quantization.md "Integer arithmetic"):
// out = clamp(MultiplyByQuantizedMultiplier(acc, multiplier, shift) + output_offset).
// shift > 0 is a left shift, shift <= 0 a right shift by -shift (TFLite convention).

// The output stage a weighted kernel ends with, whatever its output type: the requantized
// accumulator plus output_offset (the output zero point: 0 for symmetric int16), clamped to
// [act_min, act_max] in the output's integers. The int8 and int16 kernels of one family read
// the same params struct; only these bounds (and the checks of them) differ.
struct OutputStage {
  int32_t output_offset;
  int32_t act_min, act_max;
};

// Grouped (groups > 1): in_c and out_c are the pixels' channel counts, both divisible by groups;
// output channel oc of group oc / (out_c / groups) reads only that group's in_c / groups input
// channels, so the weights are [out_c][k_h][k_w][in_c / groups]. Transposed convs keep groups 1.
struct ConvParams {            // conv_s8 / conv_f32, weights OHWI [out_c][k_h][k_w][in_c / groups]
  int32_t in_h, in_w, in_c;
  int32_t out_h, out_w, out_c;
  int32_t k_h, k_w;
  int32_t stride_h, stride_w;
  int32_t pad_top, pad_left;   // bottom/right padding follow from the output size
  int32_t dil_h, dil_w;
  int32_t input_offset;        // -input_zero_point (quantized only)
  OutputStage out;             // quantized only
  float act_min_f, act_max_f;  // f32: clamp bounds
  int32_t groups = 1;
};

struct DwConvParams {          // dwconv_s8 / dwconv_f32, weights [k_h][k_w][in_c*ch_mult]
  int32_t in_h, in_w, in_c;
  int32_t out_h, out_w, out_c; // out_c == in_c * ch_mult
  int32_t ch_mult;
  int32_t k_h, k_w;
  int32_t stride_h, stride_w;
  int32_t pad_top, pad_left;
  int32_t dil_h, dil_w;
  int32_t input_offset;
  OutputStage out;
  float act_min_f, act_max_f;
};

struct FcParams {              // fc_s8 / fc_f32: out[rows][out_c] = in[rows][in_c] x W[out_c][in_c]^T + b
  int32_t rows, in_c, out_c;
  int32_t per_channel;         // 1: multiplier/shift arrays have out_c entries, 0: one entry
  int32_t input_offset;
  OutputStage out;
  float act_min_f, act_max_f;
};

// Element-wise binary ops. The output has outer*inner elements. input1 always has that shape;
// input2 is, by in2_mode: 0 the same shape, 1 `inner` values repeated for every outer index
// (per-channel broadcast in NHWC), 2 a single value.
struct BinaryParams {          // add_s8 / mul_s8 / add_f32 / mul_f32
  int32_t outer, inner;
  int32_t in2_mode;
  int32_t input1_offset, input2_offset, output_offset;
  int32_t left_shift;                          // add_s8 only (TFLite uses 20)
  int32_t input1_multiplier, input1_shift;     // add_s8 only
  int32_t input2_multiplier, input2_shift;     // add_s8 only
  int32_t output_multiplier, output_shift;
  int32_t act_min, act_max;
  float act_min_f, act_max_f;
};

struct PoolParams {            // maxpool_* / avgpool_*: input and output share quantization
  int32_t in_h, in_w, c;
  int32_t out_h, out_w;
  int32_t k_h, k_w;
  int32_t stride_h, stride_w;
  int32_t pad_top, pad_left;
  int32_t act_min, act_max;
  float act_min_f, act_max_f;
};

// softmax_s8 sums up to depth terms below 2^19 each (exp in Q12) in 32 bits: below 2^32 up to
// 8191 terms (at 8192 equal values the sum wraps to 0).
constexpr int32_t kSoftmaxMaxDepthS8 = 8191;

struct SoftmaxParams {         // softmax_s8 (TFLite int8 softmax, output scale 1/256, zp -128) / softmax_f32
  int32_t rows, depth;
  int32_t input_multiplier, input_left_shift;  // from beta * input_scale, 5 integer bits
  int32_t diff_min;
};

struct ClampParams {           // clamp_s8 / clamp_f32 over n elements (may run in place)
  int32_t n;
  int32_t act_min, act_max;
  float act_min_f, act_max_f;
};

struct RequantizeParams {      // requantize_s8: int8 (one quantization) -> int8 (another)
  int32_t n;
  int32_t input_offset, output_offset;
  int32_t multiplier, shift;
  int32_t act_min, act_max;
};

// Copies an input of `in_c` channels into channels [offset_c, offset_c+in_c) of an output with
// `out_c` channels, for `outer` positions; a cat of N inputs is N of these ops. int8 inputs
// whose quantization differs from the output's are requantized on the way.
struct ConcatSliceParams {     // concat_slice_s8 / concat_slice_f32
  int32_t outer, in_c, out_c, offset_c;
  int32_t requantize;          // 0: plain copy
  int32_t input_offset, output_offset;
  int32_t multiplier, shift;
};

// General permutation of a rank-kMaxRank tensor (lower ranks padded with leading size-1 dims):
// output dim k is input dim perm[k], of size in_dims[perm[k]].
struct PermuteParams {         // permute_b8 / permute_b32 (element size 1 or 4 bytes)
  int32_t in_dims[kMaxRank];
  int32_t perm[kMaxRank];
};

struct QuantizeParams {        // quantize_f32_s8 / dequantize_s8_f32
  int32_t n;
  float scale;
  int32_t zero_point;
};

// ---------------------------------------------------------------------------------------
// Operator coverage. Appended; the structs above keep their bytes.

// A rank-kMaxRank gather (lower ranks padded with leading size-1 dims) with a constant fill. Output element o (physical order) reads input
// element src where, per dim d, src[d] = start[d] + floor(o[d] * num[d] / den[d]), and gets
// `fill` when any src[d] falls outside the input. That one rule covers constant padding
// (num = den = 1, start = -pad_before), slices with a step (num = step), broadcasting a
// size-1 dim (num = 0) and nearest-neighbour upsampling by an integer factor (den = factor).
struct StridedCopyParams {     // strided_copy_b8 / strided_copy_b32 (element size 1 or 4 bytes)
  int32_t in_dims[kMaxRank], out_dims[kMaxRank];
  int32_t start[kMaxRank], num[kMaxRank], den[kMaxRank];
  int32_t fill;                // the fill element's bits: an int8 value, or a float's bits
};

// Average pooling whose padding counts (PyTorch count_include_pad=True, and zero pads folded
// into a pool): padding elements hold `pad_value` (int8: the zero point; float: unused, 0)
// and every window divides by k_h * k_w. Padding on the bottom/right follows from out_h/out_w.
struct AvgPoolIncludePadParams {  // avgpool_include_pad_s8 / avgpool_include_pad_f32
  PoolParams pool;
  int32_t pad_value;
};

// Element-wise lookup: out[i] = table[in[i] + 128] with a 256-entry int8 table the compiler
// computed from the exact float function and both tensors' quantization.
struct LutParams {             // lut_s8, lut_s16 (lut_s16.h: a 513-entry int16 table, interpolated)
  int32_t n;
};

// softmax_s16 over the last axis (softmax_s16.h): int16 in (symmetric), int16 out with scale
// 1/32768 and zero point 0. A row element's difference d = max - x (0..65535) maps to the exp
// table's input z = min(65535, (d * diff_multiplier + 2^(diff_shift - 1)) >> diff_shift), so z
// covers real differences 0..kSoftmaxS16ExpRange.
struct SoftmaxS16Params {      // softmax_s16
  int32_t rows, depth;
  int32_t diff_multiplier;     // in [2^14, 2^15): d * multiplier stays below 2^31
  int32_t diff_shift;          // in [1, 31]
};

enum ActivationFunction : int32_t {
  kActSigmoid = 0,
  kActTanh = 1,
  kActHardswish = 2,
  kActHardsigmoid = 3,
  kActSilu = 4,
  kActGelu = 5,                // exact: x/2 * (1 + erf(x / sqrt 2))
  kActGeluTanh = 6,            // PyTorch approximate="tanh"
  kActElu = 7,                 // alpha
  kActLeakyRelu = 8,           // alpha = negative slope
  kActNeg = 9,
  kActAbs = 10,
  kActMish = 11,               // x * tanh(softplus(x))
  kActLog = 12,                // natural logarithm (float: our own, the same bits on every core)
  kActFunctionCount = 13,
};

struct ActivationParams {      // activation_f32 over n elements (may run in place)
  int32_t n;
  int32_t function;            // ActivationFunction
  float alpha;
};

// Reduction of the middle axis of an [outer][reduce][inner] tensor to [outer][inner].
// int8: acc = sum of (q + input_offset) (or their maximum), out = clamp(requantize(acc) +
// output_offset); mean folds 1/reduce into the multiplier. float: sum, mean or max.
enum ReduceOp : int32_t { kReduceSum = 0, kReduceMean = 1, kReduceMax = 2 };
struct ReduceParams {          // reduce_s8 / reduce_f32
  int32_t outer, reduce, inner;
  int32_t op;                  // ReduceOp
  int32_t input_offset, output_offset;
  int32_t multiplier, shift;
  int32_t act_min, act_max;
};

// Index of the first maximum along the middle axis of [outer][reduce][inner]: int32 output
// [outer][inner].
struct ArgmaxParams {          // argmax_s8 / argmax_f32
  int32_t outer, reduce, inner;
};

// Largest int8 depth k whose sum of k products of offset operands (|x| <= 255) fits int32.
constexpr int32_t kBatchMatmulMaxDepthS8 = 2147483647 / (255 * 255);

// out[b][m][n] = sum_k lhs[b][m][k] * rhs[b][k][n] (rhs_transposed: rhs[b][n][k]); both
// operands are activations (attention). int8: (lhs + lhs_offset) * (rhs + rhs_offset)
// accumulated in int32, requantized with one multiplier.
struct BatchMatmulParams {     // batch_matmul_s8 / batch_matmul_f32
  int32_t batch, m, k, n;
  int32_t rhs_transposed;
  int32_t lhs_offset, rhs_offset, output_offset;
  int32_t multiplier, shift;
  int32_t act_min, act_max;
  float act_min_f, act_max_f;
};

// Layer normalization over the last axis of [rows][depth] with per-element weight and bias.
struct LayerNormParams {       // layer_norm_f32
  int32_t rows, depth;
  float eps;
};

// ---------------------------------------------------------------------------------------
// Model families (1-D sensor models, segmentation, normalizations). Appended; the structs above keep their bytes.

// PReLU over an [outer][channels][inner] tensor with one slope per channel (channels = 1: one
// slope for all). float: x > 0 ? x : alpha[c] * x. int8, with d = q + input_offset and alpha
// symmetric int8 (zero point 0): d >= 0 requantizes d with the positive multiplier (input
// scale / output scale), d < 0 requantizes d * alpha[c] with the negative one (input scale *
// alpha scale / output scale); then + output_offset, clamped. |d * alpha| <= 255 * 128.
struct PreluParams {           // prelu_s8 / prelu_f32 (may run in place)
  int32_t outer, channels, inner;
  int32_t input_offset, output_offset;
  int32_t positive_multiplier, positive_shift;
  int32_t negative_multiplier, negative_shift;
  int32_t act_min, act_max;
};

// Bilinear resize of an NHWC image (batch 1). The compiler computes, as PyTorch does, for each
// output row and then each output column (rows first, out_h + out_w entries) the two source
// indices taps[2 e], taps[2 e + 1] and the weight of the second. float: lambda in [0, 1].
// int8: w in [0, 2^kResizeWeightBits], the first tap weighing 2^kResizeWeightBits - w; the
// output keeps the input's quantization, so out = round(sum of weight products * q / 2^(2 bits))
// with rounding half away from zero: integer arithmetic only, |sum| <= 128 * 2^22.
constexpr int32_t kResizeWeightBits = 11;
struct ResizeBilinearParams {  // resize_bilinear_s8 / resize_bilinear_f32
  int32_t in_h, in_w, channels;
  int32_t out_h, out_w;
};

// Normalization over groups of channels (layer_norm, GroupNorm, InstanceNorm: one kernel).
// The input is [outer][spatial][channels], channels = groups * group_size innermost; each
// (outer index, group) is normalized over its spatial * group_size values (biased variance,
// eps inside the square root), then channel c is scaled and shifted by its own weight and
// bias. layer_norm: spatial 1, one group of the last dim; GroupNorm of an NCHW tensor (NHWC
// on device): outer N, spatial H*W; InstanceNorm: group_size 1.
//
// int8 (group_norm_s8, all integer; arith.h inverse_sqrt): with count = spatial * group_size,
// sum = Σq, sum_sq = Σq² over the group,
//   v          = 2^12 (count * sum_sq - sum²) + eps_q   (= 2^12 count² (variance + eps) / input_scale²)
//   normalized = round(2^21 (count * q - sum) / sqrt(v))  (Q15; |normalized| < 2^23 + 2)
//   acc        = normalized * weight[c] + bias[c]          (fits int32: |bias| <= 2^30)
//   out        = clamp(requantize(acc, multiplier[c], shift[c]) + output_offset)
// The input zero point cancels in count * q - sum; the 2^12 keeps eps_q's rounding small
// next to a variance of a few steps. Weights are int8 (per channel: the weight's magnitude
// sits in the channel's multiplier), shifts are <= 0 (no left shift).
constexpr int32_t kGroupNormMaxCount = 65536;           // values normalized together
constexpr int32_t kGroupNormFractionBits = 15;          // of `normalized`
constexpr int32_t kGroupNormVarianceBits = 12;          // the 2^12 of v (even)
constexpr int32_t kGroupNormMaxBias = 1 << 30;
constexpr int64_t kGroupNormMaxEps = int64_t{1} << 59;  // with 2^12 count * sum_sq <= 2^58: v < 2^60
struct GroupNormParams {       // group_norm_s8 / group_norm_f32
  int32_t outer, spatial, groups, group_size;
  float eps;                   // f32
  int32_t eps_lo, eps_hi;      // s8: eps_q = round(2^12 count² eps / input_scale²), int64 low/high words
  int32_t output_offset;       // s8
  int32_t act_min, act_max;    // s8
};

// Masks and selection (comparisons, torch.where). A mask is an int8 tensor of 0s and 1s: as a
// quantized tensor, scale 1 and zero point 0, so a mask used as a number needs no conversion.
// An int8 tensor compared with a constant is a lookup table (lut_s8) of its 256 values.
enum CompareOp : int32_t { kCompareEq = 0, kCompareNe, kCompareLt, kCompareLe, kCompareGt, kCompareGe };

// mask[n] = input1[n] <op> input2[n2], input2 broadcast by in2_mode as in BinaryParams.
// int8: the real values compared exactly, in integers. A float32 scale is a 24-bit integer
// significand times a power of two, so with each input's significand as its multiplier and its
// exponent above the smaller one as its shift,
//   a = (q1 + input1_offset) * input1_multiplier << input1_shift   (int64), b alike,
// a and b order the real values as they are ordered (ties included). A shift above
// kCompareMaxShift is clamped to it: there any nonzero value outweighs the other side anyway.
constexpr int32_t kCompareMaxShift = 10;
constexpr int32_t kCompareMaxMultiplier = (1 << 24) - 1;
struct CompareParams {         // compare_s8 / compare_f32
  int32_t outer, inner, in2_mode;
  int32_t op;                  // CompareOp
  int32_t input1_offset, input2_offset;
  int32_t input1_multiplier, input1_shift, input2_multiplier, input2_shift;
};

// output[i] = mask[i] != 0 ? a[i] : b[i]; an input whose *_single is 1 holds one value for
// every output. int8: the chosen value requantized to the output,
//   out = clamp(requantize(q + offset, multiplier, shift) + output_offset, -128, 127).
struct WhereParams {           // where_s8 / where_f32
  int32_t count;
  int32_t mask_single, a_single, b_single;
  int32_t a_offset, a_multiplier, a_shift;
  int32_t b_offset, b_multiplier, b_shift;
  int32_t output_offset;
};

// Rows of a constant table picked by int32 ids (nn.Embedding): output row i = table row
// ids[i], row_bytes bytes each (int8 or float32 rows: the output keeps the table's dtype and
// quantization). An id outside [0, rows) is the run's error; then no output byte is written.
struct GatherRowsParams {      // gather_rows
  int32_t count, rows, row_bytes;
};

// A ring buffer of the last frames of a streaming convolution (docs/streaming.md). Each run
// appends `frames` frames of `frame_elements` elements; the convolution reads a window of
// `slots` (its history plus the new frames). Every frame is stored twice, at slot s and s +
// slots, so that the window is always one contiguous run of the 2 * slots slots, starting at
// the head: a run writes its own frames, it never shifts the window.
struct RingParams {
  int32_t frame_elements;
  int32_t frames;
  int32_t slots;
};

struct RingConvParams {        // ring_conv_s8 / ring_conv_f32: conv over the ring's window
  ConvParams conv;             // in_h * in_w * in_c == slots * frame_elements
  RingParams ring;
};

struct RingDwConvParams {      // ring_dwconv_s8 / ring_dwconv_f32
  DwConvParams conv;
  RingParams ring;
};

// ---------------------------------------------------------------------------------------
// The params are bytes of the program file (docs/program_format.md): a struct's size and field
// order are part of the format. A change here is a format change (bump format::kVersion); a new
// struct gets its line below.
static_assert(sizeof(OutputStage) == 12, "OutputStage layout");
static_assert(sizeof(ConvParams) == 84, "ConvParams layout");
static_assert(sizeof(DwConvParams) == 84, "DwConvParams layout");
static_assert(sizeof(FcParams) == 40, "FcParams layout");
static_assert(sizeof(BinaryParams) == 68, "BinaryParams layout");
static_assert(sizeof(PoolParams) == 60, "PoolParams layout");
static_assert(sizeof(SoftmaxParams) == 20, "SoftmaxParams layout");
static_assert(sizeof(ClampParams) == 20, "ClampParams layout");
static_assert(sizeof(RequantizeParams) == 28, "RequantizeParams layout");
static_assert(sizeof(ConcatSliceParams) == 36, "ConcatSliceParams layout");
static_assert(sizeof(PermuteParams) == 48, "PermuteParams layout");
static_assert(sizeof(QuantizeParams) == 12, "QuantizeParams layout");
static_assert(sizeof(StridedCopyParams) == 124, "StridedCopyParams layout");
static_assert(sizeof(AvgPoolIncludePadParams) == 64, "AvgPoolIncludePadParams layout");
static_assert(sizeof(LutParams) == 4, "LutParams layout");
static_assert(sizeof(ActivationParams) == 12, "ActivationParams layout");
static_assert(sizeof(ReduceParams) == 40, "ReduceParams layout");
static_assert(sizeof(ArgmaxParams) == 12, "ArgmaxParams layout");
static_assert(sizeof(BatchMatmulParams) == 56, "BatchMatmulParams layout");
static_assert(sizeof(LayerNormParams) == 12, "LayerNormParams layout");
static_assert(sizeof(PreluParams) == 44, "PreluParams layout");
static_assert(sizeof(ResizeBilinearParams) == 20, "ResizeBilinearParams layout");
static_assert(sizeof(GroupNormParams) == 40, "GroupNormParams layout");
static_assert(sizeof(CompareParams) == 40, "CompareParams layout");
static_assert(sizeof(WhereParams) == 44, "WhereParams layout");
static_assert(sizeof(GatherRowsParams) == 12, "GatherRowsParams layout");
static_assert(sizeof(RingParams) == 12, "RingParams layout");
static_assert(sizeof(RingConvParams) == 96, "RingConvParams layout");
static_assert(sizeof(RingDwConvParams) == 96, "RingDwConvParams layout");

}  // namespace mcuflow::kernels
