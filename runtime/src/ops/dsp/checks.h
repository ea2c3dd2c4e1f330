// Load-time checks of the DSP kernels (*_check.cpp): portable C++ built for host and device, so
// the host refuses exactly the programs a board refuses. Each kernel's inputs, scratch and
// refusals are its contract in kernels_dsp.h.
#pragma once
#include "../check.h"
#include "../float_tier_checks.h"
#include "../scalar/checks.h"  // check_softmax_s8_exp_table
#include "mcuflow/kernels/kernels_dsp.h"
#include "mcuflow/runtime/kernel_entries.h"

namespace mcuflow::ops {

Error check_conv_s8_1x1_dsp(const OpCheck& c);
Error check_conv_s8_dsp(const OpCheck& c);
Error check_dwconv_s8_dsp(const OpCheck& c);
Error check_dwconv_s8_3x3_dsp(const OpCheck& c);
Error check_fc_s8_dsp(const OpCheck& c);
// Element-wise (elementwise_check.cpp): add and requantize take their reference's inputs, then
// their table (kernels_dsp.h, kernels_scalar.h); clamp and mul take their reference's inputs only.
Error check_add_s8_dsp(const OpCheck& c);
Error check_mul_s8_dsp(const OpCheck& c);

// Access orders (KernelCheck::access): the conv kernels read a pass's windows (im2col rows,
// blocks) before writing any of its pixels, a block's later pixels even earlier: forwards only,
// and so does dwconv_s8_dsp; dwconv_s8_3x3_dsp sweeps the whole image once per channel chunk:
// never in place. The element-wise kernels load each word of inputs before storing its outputs.
inline constexpr KernelCheck kernel_check_conv_s8_1x1_dsp{sizeof(kernels::ConvParams), kernels::kDspPwPreparedSlot + 1,
                                                          1, check_conv_s8_1x1_dsp, aliasing::kConvForward,
                                                          kernels::kDspConvScratchSlot};
inline constexpr KernelCheck kernel_check_conv_s8_dsp{sizeof(kernels::ConvParams), kernels::kDspConvScratchSlot + 1, 1,
                                                      check_conv_s8_dsp, aliasing::kConvForward,
                                                      kernels::kDspConvScratchSlot};
inline constexpr KernelCheck kernel_check_dwconv_s8_dsp{sizeof(kernels::DwConvParams), kernels::kDspDwPreparedSlot + 1,
                                                        1, check_dwconv_s8_dsp, aliasing::kDwConvForward};
inline constexpr KernelCheck kernel_check_dwconv_s8_3x3_dsp{sizeof(kernels::DwConvParams),
                                                            kernels::kDspDw3ScratchSlot + 1, 1, check_dwconv_s8_3x3_dsp,
                                                            aliasing::kNoSharing, kernels::kDspDw3ScratchSlot};
inline constexpr KernelCheck kernel_check_fc_s8_dsp{sizeof(kernels::FcParams), kernels::kDspFcScratchSlot + 1, 1,
                                                    check_fc_s8_dsp, aliasing::kNoSharing, kernels::kDspFcScratchSlot};
// Packed int4 weights (kernels_dsp.h): the int8 kernels' walks on what their calls build in the
// scratch, so their access orders.
Error check_conv_s8_w4_1x1_dsp(const OpCheck& c);
Error check_conv_s8_w4_dsp(const OpCheck& c);
Error check_dwconv_s8_w4_dsp(const OpCheck& c);
Error check_fc_s8_w4_dsp(const OpCheck& c);
inline constexpr KernelCheck kernel_check_conv_s8_w4_1x1_dsp{sizeof(kernels::ConvParams), kernels::kDspW4ScratchSlot + 1,
                                                             1, check_conv_s8_w4_1x1_dsp, aliasing::kConvForward,
                                                             kernels::kDspW4ScratchSlot};
inline constexpr KernelCheck kernel_check_conv_s8_w4_dsp{sizeof(kernels::ConvParams), kernels::kDspW4ScratchSlot + 1, 1,
                                                         check_conv_s8_w4_dsp, aliasing::kConvForward,
                                                         kernels::kDspW4ScratchSlot};
inline constexpr KernelCheck kernel_check_dwconv_s8_w4_dsp{sizeof(kernels::DwConvParams), kernels::kDspW4ScratchSlot + 1,
                                                           1, check_dwconv_s8_w4_dsp, aliasing::kDwConvForward,
                                                           kernels::kDspW4ScratchSlot};
inline constexpr KernelCheck kernel_check_fc_s8_w4_dsp{sizeof(kernels::FcParams), kernels::kDspW4ScratchSlot + 1, 1,
                                                       check_fc_s8_w4_dsp, aliasing::kNoSharing,
                                                       kernels::kDspW4ScratchSlot};
// The pooling kernels take their reference's input and check (nothing prepared).
inline constexpr KernelCheck kernel_check_avgpool_s8_dsp{sizeof(kernels::PoolParams), 1, 1, check_pool_s8,
                                                         aliasing::kPoolForward};
inline constexpr KernelCheck kernel_check_maxpool_s8_dsp{sizeof(kernels::PoolParams), 1, 1, check_pool_s8,
                                                         aliasing::kPoolForward};
inline constexpr KernelCheck kernel_check_add_s8_dsp{sizeof(kernels::BinaryParams), kernels::kAddTablesSlot + 1, 1,
                                                     check_add_s8_dsp, aliasing::kElementwise};
inline constexpr KernelCheck kernel_check_mul_s8_dsp{sizeof(kernels::BinaryParams), 2, 1, check_mul_s8_dsp,
                                                     aliasing::kElementwise};
inline constexpr KernelCheck kernel_check_clamp_s8_dsp{sizeof(kernels::ClampParams), 1, 1, check_clamp_s8,
                                                       aliasing::kElementwise};
// The same 256-byte table as the scalar tier's (the scalar checks build for every core).
inline constexpr KernelCheck kernel_check_requantize_s8_dsp = kernel_check_requantize_s8_scalar;
inline constexpr KernelCheck kernel_check_lut_s8_dsp = kernel_check_lut_s8_scalar;
inline constexpr KernelCheck kernel_check_reduce_s8_dsp = kernel_check_reduce_s8_scalar;
inline constexpr KernelCheck kernel_check_softmax_s8_dsp = kernel_check_softmax_s8_scalar;
// Float32 convolution (one group; 1x1: pointwise_refusal), depthwise (channel multiplier 1) and
// linear (float_tier_checks.h).
inline constexpr KernelCheck kernel_check_conv_f32_dsp = kernel_check_conv_f32_ungrouped;
inline constexpr KernelCheck kernel_check_conv_f32_1x1_dsp{sizeof(kernels::ConvParams), 3, 1,
                                                           check_conv_f32_refusing<kernels::pointwise_refusal>,
                                                           aliasing::kConvForward};
inline constexpr KernelCheck kernel_check_dwconv_f32_dsp = kernel_check_dwconv_f32_unit_multiplier;
inline constexpr KernelCheck kernel_check_fc_f32_dsp = kernel_check_fc_f32_any;

// int16 activations (s16_check.cpp, s16.cpp): the reference's inputs and check, the kernel's
// refusal and (conv, fc) its scratch (kernels_dsp.h); never in place.
Error check_conv_s16_1x1_dsp(const OpCheck& c);
Error check_conv_s16_dsp(const OpCheck& c);
Error check_dwconv_s16_dsp(const OpCheck& c);
Error check_fc_s16_dsp(const OpCheck& c);
Error check_avgpool_s16_dsp(const OpCheck& c);
inline constexpr KernelCheck kernel_check_conv_s16_1x1_dsp{sizeof(kernels::ConvParams), kernels::kDspS16ScratchSlot + 1,
                                                           1, check_conv_s16_1x1_dsp, aliasing::kNoSharing,
                                                           kernels::kDspS16ScratchSlot};
inline constexpr KernelCheck kernel_check_conv_s16_dsp{sizeof(kernels::ConvParams), kernels::kDspS16ScratchSlot + 1, 1,
                                                       check_conv_s16_dsp, aliasing::kNoSharing,
                                                       kernels::kDspS16ScratchSlot};
inline constexpr KernelCheck kernel_check_fc_s16_dsp{sizeof(kernels::FcParams), kernels::kDspS16ScratchSlot + 1, 1,
                                                     check_fc_s16_dsp, aliasing::kNoSharing, kernels::kDspS16ScratchSlot};
inline constexpr KernelCheck kernel_check_dwconv_s16_dsp{sizeof(kernels::DwConvParams), kernels::kWeightedSlots, 1,
                                                         check_dwconv_s16_dsp};
inline constexpr KernelCheck kernel_check_avgpool_s16_dsp{sizeof(kernels::PoolParams), 1, 1, check_avgpool_s16_dsp};

// Cat slice and strided copy: the scalar tier's checks (the same inputs and table).
inline constexpr KernelCheck kernel_check_concat_slice_s8_dsp = kernel_check_concat_slice_s8_scalar;
inline constexpr KernelCheck kernel_check_strided_copy_b8_dsp = kernel_check_strided_copy_b8_scalar;
// int16 table activations and softmax (s16_tables.cpp): the reference's inputs and checks.
inline constexpr KernelCheck kernel_check_lut_s16_dsp{sizeof(kernels::LutParams), 2, 1, check_lut_s16};
inline constexpr KernelCheck kernel_check_softmax_s16_dsp{sizeof(kernels::SoftmaxS16Params), 2, 1, check_softmax_s16};
inline constexpr KernelCheck kernel_check_permute_b8_dsp = kernel_check_permute_b8_scalar;

// Reads float i before it writes byte i, as the reference does.
inline constexpr KernelCheck kernel_check_quantize_f32_s8_dsp{sizeof(kernels::QuantizeParams), 1, 1, check_quantize,
                                                              aliasing::kElementwise};

inline constexpr KernelCheck kernel_check_dequantize_s8_f32_dsp = kernel_check_dequantize_s8_f32_scalar;

}  // namespace mcuflow::ops
