// Kernel ids stored in programs. Append only: ids are part of the file format. Reference
// kernels use ids below 64, for int16 activations 160 to 175 and for packed int4 weights from
// 176; optimized (tier) kernels 64 to 159.
#pragma once
#include <cstdint>

namespace mcuflow {

#define MCUFLOW_KERNELS(X)                \
  X(conv_s8, 1)                           \
  X(dwconv_s8, 2)                         \
  X(fc_s8, 3)                             \
  X(add_s8, 4)                            \
  X(mul_s8, 5)                            \
  X(maxpool_s8, 6)                        \
  X(avgpool_s8, 7)                        \
  X(softmax_s8, 8)                        \
  X(clamp_s8, 9)                          \
  X(requantize_s8, 10)                    \
  X(concat_slice_s8, 11)                  \
  X(permute_b8, 12)                       \
  X(quantize_f32_s8, 13)                  \
  X(dequantize_s8_f32, 14)                \
  X(conv_f32, 15)                         \
  X(dwconv_f32, 16)                       \
  X(fc_f32, 17)                           \
  X(add_f32, 18)                          \
  X(mul_f32, 19)                          \
  X(maxpool_f32, 20)                      \
  X(avgpool_f32, 21)                      \
  X(softmax_f32, 22)                      \
  X(clamp_f32, 23)                        \
  X(concat_slice_f32, 24)                 \
  X(permute_b32, 25)                      \
  X(strided_copy_b8, 26)                  \
  X(strided_copy_b32, 27)                 \
  X(avgpool_include_pad_s8, 28)           \
  X(avgpool_include_pad_f32, 29)          \
  X(lut_s8, 30)                           \
  X(activation_f32, 31)                   \
  X(sub_s8, 32)                           \
  X(sub_f32, 33)                          \
  X(minimum_s8, 34)                       \
  X(maximum_s8, 35)                       \
  X(minimum_f32, 36)                      \
  X(maximum_f32, 37)                      \
  X(reduce_s8, 38)                        \
  X(reduce_f32, 39)                       \
  X(argmax_s8, 40)                        \
  X(argmax_f32, 41)                       \
  X(transpose_conv_s8, 42)                \
  X(transpose_conv_f32, 43)               \
  X(batch_matmul_s8, 44)                  \
  X(batch_matmul_f32, 45)                 \
  X(layer_norm_f32, 46)                   \
  X(read_input_rows, 47)                  \
  X(prelu_s8, 48)                         \
  X(prelu_f32, 49)                        \
  X(resize_bilinear_s8, 50)               \
  X(resize_bilinear_f32, 51)              \
  X(group_norm_s8, 52)                    \
  X(group_norm_f32, 53)                   \
  X(compare_s8, 54)                       \
  X(compare_f32, 55)                      \
  X(where_s8, 56)                         \
  X(where_f32, 57)                        \
  X(gather_rows, 58)                      \
  X(ring_conv_s8, 59)                     \
  X(ring_dwconv_s8, 60)                   \
  X(ring_conv_f32, 61)                    \
  X(ring_dwconv_f32, 62)                  \
  X(quantize_f32_s16, 160)                \
  X(dequantize_s16_f32, 161)              \
  X(requantize_s8_s16, 162)               \
  X(requantize_s16_s8, 163)               \
  X(fc_s16, 164)                          \
  X(conv_s16, 165)                        \
  X(dwconv_s16, 166)                      \
  X(add_s16, 167)                         \
  X(mul_s16, 168)                         \
  X(maxpool_s16, 169)                     \
  X(avgpool_s16, 170)                     \
  X(lut_s16, 171)                         \
  X(softmax_s16, 172)                     \
  X(fc_s8_w4, 176)                        \
  X(conv_s8_w4, 177)                      \
  X(dwconv_s8_w4, 178)

// Optimized kernels: X(name, id, reference). Each computes exactly what its reference kernel
// computes (bit for bit) from the same params and leading inputs; it may take extra trailing
// constant inputs the compiler precomputed (ignored by the reference). Hosts check them as a
// device does and run the reference in their place, so host results equal device results. Source files:
// kernels/<tier>/<name>.cpp and runtime/src/ops/<tier>/; the name ends in _scalar, _dsp or _mve.
#define MCUFLOW_TIER_KERNELS(X)                 \
  X(conv_s8_1x1_dsp, 64, conv_s8)               \
  X(conv_s8_dsp, 65, conv_s8)                   \
  X(dwconv_s8_dsp, 66, dwconv_s8)               \
  X(fc_s8_dsp, 67, fc_s8)                       \
  X(dwconv_s8_3x3_dsp, 68, dwconv_s8)           \
  X(softmax_s8_dsp, 69, softmax_s8)             \
  X(avgpool_s8_dsp, 72, avgpool_s8)             \
  X(maxpool_s8_dsp, 73, maxpool_s8)             \
  X(add_s8_dsp, 74, add_s8)                     \
  X(mul_s8_dsp, 75, mul_s8)                     \
  X(clamp_s8_dsp, 76, clamp_s8)                 \
  X(requantize_s8_dsp, 77, requantize_s8)       \
  X(lut_s8_dsp, 78, lut_s8)                     \
  X(conv_s16_1x1_dsp, 83, conv_s16)             \
  X(conv_s16_dsp, 84, conv_s16)                 \
  X(dwconv_s16_dsp, 85, dwconv_s16)             \
  X(fc_s16_dsp, 86, fc_s16)                     \
  X(avgpool_s16_dsp, 87, avgpool_s16)           \
  X(conv_f32_dsp, 88, conv_f32)                 \
  X(dwconv_f32_dsp, 89, dwconv_f32)             \
  X(fc_f32_dsp, 90, fc_f32)                     \
  X(conv_f32_1x1_dsp, 91, conv_f32)             \
  X(reduce_s8_dsp, 92, reduce_s8)               \
  X(conv_s8_w4_1x1_dsp, 79, conv_s8_w4)         \
  X(conv_s8_w4_dsp, 80, conv_s8_w4)             \
  X(dwconv_s8_w4_dsp, 81, dwconv_s8_w4)         \
  X(fc_s8_w4_dsp, 82, fc_s8_w4)                 \
  X(conv_s8_1x1_mve, 96, conv_s8)               \
  X(conv_s8_mve, 97, conv_s8)                   \
  X(dwconv_s8_mve, 98, dwconv_s8)               \
  X(fc_s8_mve, 99, fc_s8)                       \
  X(add_s8_mve, 100, add_s8)                    \
  X(avgpool_s8_mve, 101, avgpool_s8)            \
  X(softmax_s8_mve, 102, softmax_s8)            \
  X(quantize_f32_s8_mve, 103, quantize_f32_s8)  \
  X(dequantize_s8_f32_mve, 104, dequantize_s8_f32) \
  X(maxpool_s8_mve, 105, maxpool_s8)            \
  X(mul_s8_mve, 106, mul_s8)                    \
  X(clamp_s8_mve, 107, clamp_s8)                \
  X(requantize_s8_mve, 108, requantize_s8)      \
  X(lut_s8_mve, 109, lut_s8)                    \
  X(conv_s16_1x1_mve, 110, conv_s16)            \
  X(conv_s16_mve, 111, conv_s16)                \
  X(dwconv_s16_mve, 112, dwconv_s16)            \
  X(fc_s16_mve, 113, fc_s16)                    \
  X(avgpool_s16_mve, 114, avgpool_s16)          \
  X(conv_f32_mve, 115, conv_f32)                \
  X(fc_f32_mve, 116, fc_f32)                    \
  X(dwconv_f32_mve, 117, dwconv_f32)            \
  X(reduce_s8_mve, 122, reduce_s8)              \
  X(conv_s8_w4_1x1_mve, 118, conv_s8_w4)        \
  X(conv_s8_w4_mve, 119, conv_s8_w4)            \
  X(dwconv_s8_w4_mve, 120, dwconv_s8_w4)        \
  X(fc_s8_w4_mve, 121, fc_s8_w4)                \
  X(conv_s8_1x1_scalar, 128, conv_s8)           \
  X(conv_s8_scalar, 129, conv_s8)               \
  X(dwconv_s8_3x3_scalar, 130, dwconv_s8)       \
  X(fc_s8_scalar, 131, fc_s8)                   \
  X(softmax_s8_scalar, 132, softmax_s8)         \
  X(avgpool_s8_scalar, 135, avgpool_s8)         \
  X(maxpool_s8_scalar, 136, maxpool_s8)         \
  X(add_s8_scalar, 137, add_s8)                 \
  X(mul_s8_scalar, 138, mul_s8)                 \
  X(clamp_s8_scalar, 139, clamp_s8)             \
  X(requantize_s8_scalar, 140, requantize_s8)   \
  X(lut_s8_scalar, 141, lut_s8)                 \
  X(reduce_s8_scalar, 142, reduce_s8)           \
  X(concat_slice_s8_dsp, 70, concat_slice_s8)   \
  X(concat_slice_s8_mve, 123, concat_slice_s8)  \
  X(concat_slice_s8_scalar, 133, concat_slice_s8) \
  X(strided_copy_b8_dsp, 71, strided_copy_b8)   \
  X(strided_copy_b8_mve, 124, strided_copy_b8)  \
  X(strided_copy_b8_scalar, 134, strided_copy_b8) \
  X(lut_s16_dsp, 150, lut_s16)                  \
  X(softmax_s16_dsp, 151, softmax_s16)          \
  X(lut_s16_mve, 127, lut_s16)                  \
  X(softmax_s16_mve, 152, softmax_s16)          \
  X(lut_s16_scalar, 153, lut_s16)               \
  X(softmax_s16_scalar, 154, softmax_s16)        \
  X(dwconv_s8_scalar, 146, dwconv_s8)           \
  X(permute_b8_dsp, 93, permute_b8)             \
  X(permute_b8_mve, 125, permute_b8)            \
  X(permute_b8_scalar, 143, permute_b8)         \
  X(quantize_f32_s8_dsp, 94, quantize_f32_s8)   \
  X(dequantize_s8_f32_dsp, 95, dequantize_s8_f32) \
  X(dequantize_s8_f32_scalar, 145, dequantize_s8_f32)

enum class KernelId : uint16_t {
#define MCUFLOW_KERNEL_ENUM(name, id) name = id,
#define MCUFLOW_TIER_KERNEL_ENUM(name, id, reference) name = id,
  MCUFLOW_KERNELS(MCUFLOW_KERNEL_ENUM)
  MCUFLOW_TIER_KERNELS(MCUFLOW_TIER_KERNEL_ENUM)
#undef MCUFLOW_KERNEL_ENUM
#undef MCUFLOW_TIER_KERNEL_ENUM
};

// One past the largest id, whatever the order of the lists (a table indexed by id has this size).
constexpr uint16_t kKernelIdCount = [] {
  uint16_t count = 0;
#define MCUFLOW_KERNEL_MAX(name, id) count = count > (id) ? count : (id) + 1;
#define MCUFLOW_TIER_KERNEL_MAX(name, id, reference) MCUFLOW_KERNEL_MAX(name, id)
  MCUFLOW_KERNELS(MCUFLOW_KERNEL_MAX)
  MCUFLOW_TIER_KERNELS(MCUFLOW_TIER_KERNEL_MAX)
#undef MCUFLOW_KERNEL_MAX
#undef MCUFLOW_TIER_KERNEL_MAX
  return count;
}();

// Whether `k` computes kReference: is it, or is a tier kernel whose entry names it. Code that
// recognises an op by what it computes (a cat slice writes only its channels of the output) asks
// this, so a tier id works wherever its reference's does. A template: the other references' terms
// fold away, leaving a few compares (the runtime core's flash).
template <KernelId kReference>
constexpr bool computes(KernelId k) {
#define MCUFLOW_TIER_COMPUTES(name, id, reference) || (KernelId::reference == kReference && k == KernelId::name)
  return k == kReference MCUFLOW_TIER_KERNELS(MCUFLOW_TIER_COMPUTES);
#undef MCUFLOW_TIER_COMPUTES
}

}  // namespace mcuflow
