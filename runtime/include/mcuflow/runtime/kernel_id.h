// Kernel ids stored in programs. Append only: ids are part of the file format.
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
  X(permute_b32, 25)

enum class KernelId : uint16_t {
#define MCUFLOW_KERNEL_ENUM(name, id) name = id,
  MCUFLOW_KERNELS(MCUFLOW_KERNEL_ENUM)
#undef MCUFLOW_KERNEL_ENUM
  kCount
};

}  // namespace mcuflow
