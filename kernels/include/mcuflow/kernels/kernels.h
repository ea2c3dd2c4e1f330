// The kernel library: one function per kernel, one kernel per file (kernels/<tier>/<name>.cpp).
// Kernels trust their arguments: every check happened in the compiler and the program
// verifier, so the bodies are straight-line arithmetic. Buffers are NHWC, batch 1.
#pragma once
#include <cstdint>
#include "mcuflow/kernels/params.h"

namespace mcuflow::kernels {

// --- int8 (reference tier) ---
void conv_s8(const ConvParams& p, const int8_t* input, const int8_t* weights, const int32_t* bias,
             const int32_t* multipliers, const int32_t* shifts, int8_t* output);
void dwconv_s8(const DwConvParams& p, const int8_t* input, const int8_t* weights, const int32_t* bias,
               const int32_t* multipliers, const int32_t* shifts, int8_t* output);
void fc_s8(const FcParams& p, const int8_t* input, const int8_t* weights, const int32_t* bias,
           const int32_t* multipliers, const int32_t* shifts, int8_t* output);
void add_s8(const BinaryParams& p, const int8_t* input1, const int8_t* input2, int8_t* output);
void mul_s8(const BinaryParams& p, const int8_t* input1, const int8_t* input2, int8_t* output);
void maxpool_s8(const PoolParams& p, const int8_t* input, int8_t* output);
void avgpool_s8(const PoolParams& p, const int8_t* input, int8_t* output);
void softmax_s8(const SoftmaxParams& p, const int8_t* input, int8_t* output);
void clamp_s8(const ClampParams& p, const int8_t* input, int8_t* output);
void requantize_s8(const RequantizeParams& p, const int8_t* input, int8_t* output);
void concat_slice_s8(const ConcatSliceParams& p, const int8_t* input, int8_t* output);
void permute_b8(const PermuteParams& p, const int8_t* input, int8_t* output);
void quantize_f32_s8(const QuantizeParams& p, const float* input, int8_t* output);
void dequantize_s8_f32(const QuantizeParams& p, const int8_t* input, float* output);

// --- float32 (reference tier; the FP32 variant and the float fallback path) ---
void conv_f32(const ConvParams& p, const float* input, const float* weights, const float* bias, float* output);
void dwconv_f32(const DwConvParams& p, const float* input, const float* weights, const float* bias, float* output);
void fc_f32(const FcParams& p, const float* input, const float* weights, const float* bias, float* output);
void add_f32(const BinaryParams& p, const float* input1, const float* input2, float* output);
void mul_f32(const BinaryParams& p, const float* input1, const float* input2, float* output);
void maxpool_f32(const PoolParams& p, const float* input, float* output);
void avgpool_f32(const PoolParams& p, const float* input, float* output);
void softmax_f32(const SoftmaxParams& p, const float* input, float* output);
void clamp_f32(const ClampParams& p, const float* input, float* output);
void concat_slice_f32(const ConcatSliceParams& p, const float* input, float* output);
void permute_b32(const PermuteParams& p, const int32_t* input, int32_t* output);

// --- operator coverage ---
// Element-size kernels: int8 activations and int8 quantization stay as they are.
void strided_copy_b8(const StridedCopyParams& p, const int8_t* input, int8_t* output);
void strided_copy_b32(const StridedCopyParams& p, const int32_t* input, int32_t* output);
void avgpool_include_pad_s8(const AvgPoolIncludePadParams& p, const int8_t* input, int8_t* output);
void avgpool_include_pad_f32(const AvgPoolIncludePadParams& p, const float* input, float* output);
void lut_s8(const LutParams& p, const int8_t* input, const int8_t* table, int8_t* output);
void activation_f32(const ActivationParams& p, const float* input, float* output);
void sub_s8(const BinaryParams& p, const int8_t* input1, const int8_t* input2, int8_t* output);
void sub_f32(const BinaryParams& p, const float* input1, const float* input2, float* output);
void minimum_s8(const BinaryParams& p, const int8_t* input1, const int8_t* input2, int8_t* output);
void maximum_s8(const BinaryParams& p, const int8_t* input1, const int8_t* input2, int8_t* output);
void minimum_f32(const BinaryParams& p, const float* input1, const float* input2, float* output);
void maximum_f32(const BinaryParams& p, const float* input1, const float* input2, float* output);
void reduce_s8(const ReduceParams& p, const int8_t* input, int8_t* output);
void reduce_f32(const ReduceParams& p, const float* input, float* output);
void argmax_s8(const ArgmaxParams& p, const int8_t* input, int32_t* output);
void argmax_f32(const ArgmaxParams& p, const float* input, int32_t* output);
// Transposed convolution reuses ConvParams: in_* is the (smaller) input, out_* the output,
// pad_top/pad_left the rows/columns cropped from the full result.
void transpose_conv_s8(const ConvParams& p, const int8_t* input, const int8_t* weights, const int32_t* bias,
                       const int32_t* multipliers, const int32_t* shifts, int8_t* output);
void transpose_conv_f32(const ConvParams& p, const float* input, const float* weights, const float* bias,
                        float* output);
void batch_matmul_s8(const BatchMatmulParams& p, const int8_t* lhs, const int8_t* rhs, int8_t* output);
void batch_matmul_f32(const BatchMatmulParams& p, const float* lhs, const float* rhs, float* output);
void layer_norm_f32(const LayerNormParams& p, const float* input, const float* weight, const float* bias,
                    float* output);
void group_norm_s8(const GroupNormParams& p, const int8_t* input, const int8_t* weights, const int32_t* bias,
                   const int32_t* multipliers, const int32_t* shifts, int8_t* output);
void group_norm_f32(const GroupNormParams& p, const float* input, const float* weight, const float* bias,
                    float* output);

// --- model families (1-D sensor models, segmentation, normalizations) ---
void prelu_s8(const PreluParams& p, const int8_t* input, const int8_t* alpha, int8_t* output);
void prelu_f32(const PreluParams& p, const float* input, const float* alpha, float* output);
void resize_bilinear_s8(const ResizeBilinearParams& p, const int8_t* input, const int32_t* taps,
                        const int32_t* weights, int8_t* output);
void resize_bilinear_f32(const ResizeBilinearParams& p, const float* input, const int32_t* taps,
                         const float* weights, float* output);
void compare_s8(const CompareParams& p, const int8_t* input1, const int8_t* input2, int8_t* mask);
void compare_f32(const CompareParams& p, const float* input1, const float* input2, int8_t* mask);
void where_s8(const WhereParams& p, const int8_t* mask, const int8_t* a, const int8_t* b, int8_t* output);
void where_f32(const WhereParams& p, const int8_t* mask, const float* a, const float* b, float* output);
// False, writing nothing, when an id lies outside [0, p.rows).
bool gather_rows(const GatherRowsParams& p, const int32_t* ids, const uint8_t* table, uint8_t* output);

// --- int16 activations, int8 weights (A16W8; docs/quantization.md "int16 activations") ---
// Symmetric int16 activations (zero point 0), int64 biases: the int8 kernels' params structs.
void quantize_f32_s16(const QuantizeParams& p, const float* input, int16_t* output);
void dequantize_s16_f32(const QuantizeParams& p, const int16_t* input, float* output);
void requantize_s8_s16(const RequantizeParams& p, const int8_t* input, int16_t* output);
void requantize_s16_s8(const RequantizeParams& p, const int16_t* input, int8_t* output);
void fc_s16(const FcParams& p, const int16_t* input, const int8_t* weights, const int64_t* bias,
            const int32_t* multipliers, const int32_t* shifts, int16_t* output);
void conv_s16(const ConvParams& p, const int16_t* input, const int8_t* weights, const int64_t* bias,
              const int32_t* multipliers, const int32_t* shifts, int16_t* output);
void dwconv_s16(const DwConvParams& p, const int16_t* input, const int8_t* weights, const int64_t* bias,
                const int32_t* multipliers, const int32_t* shifts, int16_t* output);
void add_s16(const BinaryParams& p, const int16_t* input1, const int16_t* input2, int16_t* output);
void mul_s16(const BinaryParams& p, const int16_t* input1, const int16_t* input2, int16_t* output);
void maxpool_s16(const PoolParams& p, const int16_t* input, int16_t* output);
void avgpool_s16(const PoolParams& p, const int16_t* input, int16_t* output);
// lut_s16: out[i] = lut_s16_at(table, in[i] + 32768) over the compiler's 513-entry table (lut_s16.h).
void lut_s16(const LutParams& p, const int16_t* input, const int16_t* table, int16_t* output);
// softmax_s16: softmax_s16.h's arithmetic over the compiler's 513-entry exp table.
void softmax_s16(const SoftmaxS16Params& p, const int16_t* input, const int16_t* exp_table, int16_t* output);

// --- int8 activations, packed int4 weights (W4A8; docs/quantization.md "int4 weights") ---
// The int8 kernels' params and output stage; weights symmetric per output channel, two a byte,
// the first element in the low nibble (kernels/reference/w4_common.h).
void fc_s8_w4(const FcParams& p, const int8_t* input, const uint8_t* weights, const int32_t* bias,
              const int32_t* multipliers, const int32_t* shifts, int8_t* output);
void conv_s8_w4(const ConvParams& p, const int8_t* input, const uint8_t* weights, const int32_t* bias,
                const int32_t* multipliers, const int32_t* shifts, int8_t* output);
void dwconv_s8_w4(const DwConvParams& p, const int8_t* input, const uint8_t* weights, const int32_t* bias,
                  const int32_t* multipliers, const int32_t* shifts, int8_t* output);

// --- streaming convolution over a ring of frames (params.h RingParams) ---
// Appends the run's frames to `ring` at `*head`, moves the head past them and convolves the
// window: the kernels of conv_s8 / dwconv_s8 / conv_f32 / dwconv_f32 over the ring's bytes.
void ring_conv_s8(const RingConvParams& p, const int8_t* frames, const int8_t* weights, const int32_t* bias,
                  const int32_t* multipliers, const int32_t* shifts, int8_t* output, int8_t* ring, int32_t* head);
void ring_dwconv_s8(const RingDwConvParams& p, const int8_t* frames, const int8_t* weights, const int32_t* bias,
                    const int32_t* multipliers, const int32_t* shifts, int8_t* output, int8_t* ring, int32_t* head);
void ring_conv_f32(const RingConvParams& p, const float* frames, const float* weights, const float* bias,
                   float* output, float* ring, int32_t* head);
void ring_dwconv_f32(const RingDwConvParams& p, const float* frames, const float* weights, const float* bias,
                     float* output, float* ring, int32_t* head);

}  // namespace mcuflow::kernels
