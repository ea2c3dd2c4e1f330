// Load-time checks of the DSP kernels (*_check.cpp): portable C++ built for host and device, so
// the host refuses exactly the programs a board refuses. Inputs: the reference's five (input,
// weights, bias, multipliers, shifts), then conv and fc take their scratch, depthwise convs
// their prepared (widened) weights and dwconv_s8_3x3_dsp its scratch of transposed rows
// (kernels_dsp.h).
#pragma once
#include "../check.h"
#include "../scalar/checks.h"  // check_softmax_s8_exp_table
#include "mcuflow/kernels/params.h"
#include "mcuflow/runtime/kernel_entries.h"

namespace mcuflow::ops {
namespace dsp {
constexpr uint32_t kScratchSlot = 5;  // conv, fc
constexpr uint32_t kPreparedSlot = 5, kDw3ScratchSlot = 6;
}  // namespace dsp

Error check_conv_s8_1x1_dsp(const OpCheck& c);
Error check_conv_s8_dsp(const OpCheck& c);
Error check_dwconv_s8_dsp(const OpCheck& c);
Error check_dwconv_s8_3x3_dsp(const OpCheck& c);
Error check_fc_s8_dsp(const OpCheck& c);
// Element-wise (elementwise_check.cpp): add and requantize take their reference's inputs, then
// their table (kernels_dsp.h, kernels_scalar.h); clamp and mul take their reference's inputs only.
Error check_add_s8_dsp(const OpCheck& c);
Error check_mul_s8_dsp(const OpCheck& c);

inline constexpr KernelCheck kernel_check_conv_s8_1x1_dsp{sizeof(kernels::ConvParams), dsp::kScratchSlot + 1, 1,
                                                          check_conv_s8_1x1_dsp, dsp::kScratchSlot};
inline constexpr KernelCheck kernel_check_conv_s8_dsp{sizeof(kernels::ConvParams), dsp::kScratchSlot + 1, 1,
                                                      check_conv_s8_dsp, dsp::kScratchSlot};
inline constexpr KernelCheck kernel_check_dwconv_s8_dsp{sizeof(kernels::DwConvParams), dsp::kPreparedSlot + 1, 1,
                                                        check_dwconv_s8_dsp};
inline constexpr KernelCheck kernel_check_dwconv_s8_3x3_dsp{sizeof(kernels::DwConvParams), dsp::kDw3ScratchSlot + 1,
                                                            1, check_dwconv_s8_3x3_dsp, dsp::kDw3ScratchSlot};
inline constexpr KernelCheck kernel_check_fc_s8_dsp{sizeof(kernels::FcParams), dsp::kScratchSlot + 1, 1,
                                                    check_fc_s8_dsp, dsp::kScratchSlot};
// The pooling kernels take their reference's input and check (nothing prepared).
inline constexpr KernelCheck kernel_check_avgpool_s8_dsp{sizeof(kernels::PoolParams), 1, 1, check_pool_s8};
inline constexpr KernelCheck kernel_check_maxpool_s8_dsp{sizeof(kernels::PoolParams), 1, 1, check_pool_s8};
inline constexpr KernelCheck kernel_check_add_s8_dsp{sizeof(kernels::BinaryParams), 3, 1, check_add_s8_dsp};
inline constexpr KernelCheck kernel_check_mul_s8_dsp{sizeof(kernels::BinaryParams), 2, 1, check_mul_s8_dsp};
inline constexpr KernelCheck kernel_check_clamp_s8_dsp{sizeof(kernels::ClampParams), 1, 1, check_clamp_s8};
// The same 256-byte table as the scalar tier's (the scalar checks build for every core).
inline constexpr KernelCheck kernel_check_requantize_s8_dsp = kernel_check_requantize_s8_scalar;
inline constexpr KernelCheck kernel_check_softmax_s8_dsp = kernel_check_softmax_s8_scalar;

}  // namespace mcuflow::ops
