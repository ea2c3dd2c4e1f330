// Load-time checks shared by the float32 convolution, depthwise and linear kernels of the DSP and
// MVE tiers: their references' inputs and checks, then the kernels' refusals (tier_contract.h);
// pixels forwards, each pixel's outputs written after its window is read (a two-pixel pass: the
// second pixel's after the first's window too); linear never in place.
#pragma once
#include "check.h"
#include "mcuflow/runtime/kernel_entries.h"

namespace mcuflow::ops {

inline constexpr KernelCheck kernel_check_conv_f32_ungrouped{sizeof(kernels::ConvParams), 3, 1,
                                                             check_conv_f32_refusing<kernels::ungrouped_refusal>,
                                                             aliasing::kConvForward};
inline constexpr KernelCheck kernel_check_dwconv_f32_unit_multiplier{
    sizeof(kernels::DwConvParams), 3, 1, check_dwconv_f32_refusing<kernels::unit_multiplier_refusal>,
    aliasing::kDwConvForward};
inline constexpr KernelCheck kernel_check_fc_f32_any{sizeof(kernels::FcParams), 3, 1, check_fc_f32};

}  // namespace mcuflow::ops
