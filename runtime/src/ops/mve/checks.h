// Load-time checks of the MVE kernels (prepared_inputs_check.cpp): portable C++ built for host
// and device, so the host refuses exactly the programs a board refuses. Each kernel's inputs,
// scratch and refusals are its contract in kernels_mve.h: the convolution and linear kernels'
// prepared input must follow exactly from the reference's weights and tables; add and the
// pooling kernels take their reference's inputs and checks.
#pragma once
#include "../check.h"
#include "../float_tier_checks.h"
#include "../scalar/checks.h"  // the softmax and requantize tables' checks
#include "mcuflow/kernels/kernels_mve.h"
#include "mcuflow/runtime/kernel_entries.h"

namespace mcuflow::ops {
namespace mve {
inline int8_t* scratch(const OpCall& c, uint8_t slot = kernels::kMveScratchSlot) {
  return reinterpret_cast<int8_t*>(c.data[slot]);
}
// Whether a tensor's bytes start on a word, wherever the kernel reads them (the section or the
// copy; the program's regions and constants section are 16-byte aligned): LDM and VLDM need it.
inline bool word_aligned(const format::TensorRecord& t) { return (t.offset | t.copy_offset) % 4 == 0; }
// The scratch at `slot`: `bytes` of int8 in the arena (the kernel writes it), word aligned.
inline bool scratch_valid(const OpCheck& c, uint8_t slot, uint64_t bytes) {
  return c.op->input_count > slot && c.tensor(slot).storage == format::Storage::kArena &&
         tensor_is(c, slot, format::DType::kInt8, bytes) && word_aligned(c.tensor(slot));
}
}  // namespace mve

Error check_conv_s8_1x1_mve(const OpCheck& c);
Error check_conv_s8_mve(const OpCheck& c);
Error check_dwconv_s8_mve(const OpCheck& c);
Error check_fc_s8_mve(const OpCheck& c);

// Access orders (KernelCheck::access): conv_s8_1x1_mve (pairs of pixels, both read before either
// is written) and dwconv_s8_mve walk both ways as their references do; conv_s8_mve reads a pass's
// tap pointers before writing any of its pixels: forwards only. The element-wise kernels load each
// vector of inputs before storing its outputs (quantize: four elements per step).
inline constexpr KernelCheck kernel_check_conv_s8_1x1_mve{sizeof(kernels::ConvParams), kernels::kMveScratchSlot + 1, 1,
                                                          check_conv_s8_1x1_mve, aliasing::kConvBothWays,
                                                          kernels::kMveScratchSlot};
inline constexpr KernelCheck kernel_check_conv_s8_mve{sizeof(kernels::ConvParams), kernels::kMveScratchSlot + 1, 1,
                                                      check_conv_s8_mve, aliasing::kConvForward,
                                                      kernels::kMveScratchSlot};
inline constexpr KernelCheck kernel_check_dwconv_s8_mve{sizeof(kernels::DwConvParams), kernels::kMvePreparedSlot + 1, 1,
                                                        check_dwconv_s8_mve, aliasing::kDwConvBothWays};
// A single row needs no scratch: the scratch slot is optional.
inline constexpr KernelCheck kernel_check_fc_s8_mve{sizeof(kernels::FcParams), kernels::kMvePreparedSlot + 1, 1,
                                                    check_fc_s8_mve, aliasing::kNoSharing, kernels::kMveScratchSlot};
// Packed int4 weights (w4_check.cpp, kernels_mve.h): the int8 kernels' walks on what their calls
// build in the scratch, so their access orders.
Error check_conv_s8_w4_1x1_mve(const OpCheck& c);
Error check_conv_s8_w4_mve(const OpCheck& c);
Error check_dwconv_s8_w4_mve(const OpCheck& c);
Error check_fc_s8_w4_mve(const OpCheck& c);
inline constexpr KernelCheck kernel_check_conv_s8_w4_1x1_mve{sizeof(kernels::ConvParams),
                                                             kernels::kMveW4ScratchSlot + 1, 1,
                                                             check_conv_s8_w4_1x1_mve, aliasing::kConvBothWays,
                                                             kernels::kMveW4ScratchSlot};
inline constexpr KernelCheck kernel_check_conv_s8_w4_mve{sizeof(kernels::ConvParams), kernels::kMveW4ScratchSlot + 1, 1,
                                                         check_conv_s8_w4_mve, aliasing::kConvForward,
                                                         kernels::kMveW4ScratchSlot};
inline constexpr KernelCheck kernel_check_dwconv_s8_w4_mve{sizeof(kernels::DwConvParams),
                                                           kernels::kMveW4ScratchSlot + 1, 1, check_dwconv_s8_w4_mve,
                                                           aliasing::kDwConvBothWays, kernels::kMveW4ScratchSlot};
inline constexpr KernelCheck kernel_check_fc_s8_w4_mve{sizeof(kernels::FcParams), kernels::kMveW4ScratchSlot + 1, 1,
                                                       check_fc_s8_w4_mve, aliasing::kNoSharing,
                                                       kernels::kMveW4ScratchSlot};
// int16 activations (s16.cpp): the reference's inputs and check, plus the kernel's refusal.
Error check_conv_s16_1x1_mve(const OpCheck& c);
Error check_conv_s16_mve(const OpCheck& c);
Error check_dwconv_s16_mve(const OpCheck& c);
inline constexpr KernelCheck kernel_check_conv_s16_1x1_mve{sizeof(kernels::ConvParams), 5, 1, check_conv_s16_1x1_mve};
inline constexpr KernelCheck kernel_check_conv_s16_mve{sizeof(kernels::ConvParams), 5, 1, check_conv_s16_mve};
inline constexpr KernelCheck kernel_check_dwconv_s16_mve{sizeof(kernels::DwConvParams), 5, 1, check_dwconv_s16_mve};
inline constexpr KernelCheck kernel_check_fc_s16_mve{sizeof(kernels::FcParams), 5, 1, check_fc_s16};
Error check_avgpool_s16_mve(const OpCheck& c);
inline constexpr KernelCheck kernel_check_avgpool_s16_mve{sizeof(kernels::PoolParams), 1, 1, check_avgpool_s16_mve};
inline constexpr KernelCheck kernel_check_add_s8_mve{sizeof(kernels::BinaryParams), 2, 1, check_binary_s8,
                                                     aliasing::kElementwise};
inline constexpr KernelCheck kernel_check_mul_s8_mve{sizeof(kernels::BinaryParams), 2, 1, check_binary_s8,
                                                     aliasing::kElementwise};
inline constexpr KernelCheck kernel_check_clamp_s8_mve{sizeof(kernels::ClampParams), 1, 1, check_clamp_s8,
                                                       aliasing::kElementwise};
inline constexpr KernelCheck kernel_check_requantize_s8_mve = kernel_check_requantize_s8_scalar;
inline constexpr KernelCheck kernel_check_lut_s8_mve = kernel_check_lut_s8_scalar;
inline constexpr KernelCheck kernel_check_reduce_s8_mve = kernel_check_reduce_s8_scalar;
inline constexpr KernelCheck kernel_check_avgpool_s8_mve{sizeof(kernels::PoolParams), 1, 1, check_pool_s8,
                                                         aliasing::kPoolForward};
inline constexpr KernelCheck kernel_check_maxpool_s8_mve{sizeof(kernels::PoolParams), 1, 1, check_pool_s8,
                                                         aliasing::kPoolForward};
inline constexpr KernelCheck kernel_check_softmax_s8_mve = kernel_check_softmax_s8_scalar;
// Quantization at the inputs and outputs (quantize_check.cpp): the reference's input and check;
// the dequantization also needs a normal scale (kernels_mve.h).
Error check_dequantize_s8_f32_mve(const OpCheck& c);
inline constexpr KernelCheck kernel_check_quantize_f32_s8_mve{sizeof(kernels::QuantizeParams), 1, 1, check_quantize,
                                                              aliasing::kElementwise};
inline constexpr KernelCheck kernel_check_dequantize_s8_f32_mve{sizeof(kernels::QuantizeParams), 1, 1,
                                                                check_dequantize_s8_f32_mve, aliasing::kElementwise};

// Float32 convolution (one group), depthwise (channel multiplier 1) and linear.
inline constexpr KernelCheck kernel_check_conv_f32_mve = kernel_check_conv_f32_ungrouped;
inline constexpr KernelCheck kernel_check_dwconv_f32_mve = kernel_check_dwconv_f32_unit_multiplier;
inline constexpr KernelCheck kernel_check_fc_f32_mve = kernel_check_fc_f32_any;

// Cat slice and strided copy: the scalar tier's checks (the same inputs and table).
inline constexpr KernelCheck kernel_check_concat_slice_s8_mve = kernel_check_concat_slice_s8_scalar;
inline constexpr KernelCheck kernel_check_strided_copy_b8_mve = kernel_check_strided_copy_b8_scalar;
// int16 table activations and softmax (s16_tables.cpp): the reference's inputs and checks.
inline constexpr KernelCheck kernel_check_lut_s16_mve{sizeof(kernels::LutParams), 2, 1, check_lut_s16};
inline constexpr KernelCheck kernel_check_softmax_s16_mve{sizeof(kernels::SoftmaxS16Params), 2, 1, check_softmax_s16};
inline constexpr KernelCheck kernel_check_permute_b8_mve = kernel_check_permute_b8_scalar;

}  // namespace mcuflow::ops
