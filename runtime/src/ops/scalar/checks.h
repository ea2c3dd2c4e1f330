// Load-time checks of the scalar (Armv6-M) kernels (*_check.cpp): portable C++ built for host
// and device, so the host refuses exactly the programs a board refuses. Each kernel's inputs,
// scratch and refusals are its contract in kernels_scalar.h; a prepared input (bias',
// requantization words and grouped weights) must equal its recomputation from the reference's.
#pragma once
#include "../check.h"
#include "mcuflow/kernels/kernels_scalar.h"
#include "mcuflow/kernels/softmax_table.h"
#include "mcuflow/runtime/kernel_entries.h"

namespace mcuflow::ops {

Error check_conv_s8_1x1_scalar(const OpCheck& c);
Error check_conv_s8_scalar(const OpCheck& c);
Error check_dwconv_s8_3x3_scalar(const OpCheck& c);
Error check_dwconv_s8_scalar(const OpCheck& c);
Error check_fc_s8_scalar(const OpCheck& c);
Error check_avgpool_s8_scalar(const OpCheck& c);

// Access orders (KernelCheck::access): the window kernels walk the pixels exactly as their
// references do, both ways; clamp reads aligned word i before writing it, the other element-wise
// kernels element i.
inline constexpr KernelCheck kernel_check_conv_s8_1x1_scalar{sizeof(kernels::ConvParams),
                                                             kernels::kScalarWindowSlot + 1, 1,
                                                             check_conv_s8_1x1_scalar, aliasing::kConvBothWays,
                                                             kernels::kScalarWindowSlot};
inline constexpr KernelCheck kernel_check_conv_s8_scalar{sizeof(kernels::ConvParams), kernels::kScalarWindowSlot + 1, 1,
                                                         check_conv_s8_scalar, aliasing::kConvBothWays,
                                                         kernels::kScalarWindowSlot};
inline constexpr KernelCheck kernel_check_dwconv_s8_3x3_scalar{sizeof(kernels::DwConvParams),
                                                               kernels::kScalarPreparedSlot + 1, 1,
                                                               check_dwconv_s8_3x3_scalar, aliasing::kDwConvBothWays};
inline constexpr KernelCheck kernel_check_dwconv_s8_scalar{sizeof(kernels::DwConvParams), kernels::kScalarWindowSlot + 1,
                                                           1, check_dwconv_s8_scalar, aliasing::kDwConvBothWays,
                                                           kernels::kScalarWindowSlot};
inline constexpr KernelCheck kernel_check_fc_s8_scalar{sizeof(kernels::FcParams), kernels::kScalarPreparedSlot + 1, 1,
                                                       check_fc_s8_scalar};
// Pooling: the reference's input, then for the average the reciprocals (pool_check.cpp).
inline constexpr KernelCheck kernel_check_avgpool_s8_scalar{sizeof(kernels::PoolParams),
                                                            kernels::kScalarPoolReciprocalSlot + 1, 1,
                                                            check_avgpool_s8_scalar, aliasing::kPoolForward};
inline constexpr KernelCheck kernel_check_maxpool_s8_scalar{sizeof(kernels::PoolParams), 1, 1, check_pool_s8,
                                                            aliasing::kPoolForward};

// Element-wise (elementwise_check.cpp): add and requantize take their reference's inputs, then
// their table (kernels_scalar.h); mul and clamp take their reference's inputs and check.
Error check_add_s8_scalar(const OpCheck& c);
Error check_requantize_s8_scalar(const OpCheck& c);
inline constexpr KernelCheck kernel_check_add_s8_scalar{sizeof(kernels::BinaryParams), kernels::kAddTablesSlot + 1, 1,
                                                        check_add_s8_scalar, aliasing::kElementwise};
inline constexpr KernelCheck kernel_check_mul_s8_scalar{sizeof(kernels::BinaryParams), 2, 1, check_binary_s8,
                                                        aliasing::kElementwise};
inline constexpr KernelCheck kernel_check_clamp_s8_scalar{sizeof(kernels::ClampParams), 1, 1, check_clamp_s8,
                                                          aliasing::kElementwise};
inline constexpr KernelCheck kernel_check_requantize_s8_scalar{sizeof(kernels::RequantizeParams),
                                                               kernels::kRequantizeTableSlot + 1, 1,
                                                               check_requantize_s8_scalar, aliasing::kElementwise};
// The table-lookup activations of every tier: the reference's inputs and check.
inline constexpr KernelCheck kernel_check_lut_s8_scalar{sizeof(kernels::LutParams), 2, 1, check_lut_s8};

// The sum / mean kernels of every tier (check_reduce_sum_s8): the reference's input, check and
// access (never in place), and a sum or a mean.
inline constexpr KernelCheck kernel_check_reduce_s8_scalar{sizeof(kernels::ReduceParams), 1, 1, check_reduce_sum_s8};

// The softmax kernels of every tier (softmax_check.cpp; the scalar tier builds for every core):
// the reference's input, then the exp table (softmax_table.h), which must equal its
// recomputation from the params.
Error check_softmax_s8_exp_table(const OpCheck& c);
inline constexpr KernelCheck kernel_check_softmax_s8_scalar{sizeof(kernels::SoftmaxParams),
                                                            kernels::kSoftmaxExpTableSlot + 1, 1,
                                                            check_softmax_s8_exp_table};

// The cat slice and strided copy kernels of every tier (copy_check.cpp): the reference's input
// and access (onto its own source: the planner's in-place slices), and for a cat slice that
// requantizes its table after it (kernels_scalar.h), for a plain copy no table.
Error check_concat_slice_s8_scalar(const OpCheck& c);
inline constexpr KernelCheck kernel_check_concat_slice_s8_scalar{sizeof(kernels::ConcatSliceParams), 1, 1,
                                                                 check_concat_slice_s8_scalar, aliasing::kOntoSource};
inline constexpr KernelCheck kernel_check_strided_copy_b8_scalar{sizeof(kernels::StridedCopyParams), 1, 1,
                                                                 check_strided_copy_b8, aliasing::kOntoSource};
// The int16 table activation and softmax (s16_tables.cpp): the reference's inputs and checks.
inline constexpr KernelCheck kernel_check_lut_s16_scalar{sizeof(kernels::LutParams), 2, 1, check_lut_s16};
inline constexpr KernelCheck kernel_check_softmax_s16_scalar{sizeof(kernels::SoftmaxS16Params), 2, 1, check_softmax_s16};
// The byte permutations of every tier: the reference's input and check.
inline constexpr KernelCheck kernel_check_permute_b8_scalar{sizeof(kernels::PermuteParams), 1, 1, check_permute_b8};

// The dequantizations of the scalar and DSP tiers: the reference's input, then the table of its
// 256 outputs (compared bit for bit, elementwise_check.cpp).
Error check_dequantize_s8_f32_scalar(const OpCheck& c);
inline constexpr KernelCheck kernel_check_dequantize_s8_f32_scalar{sizeof(kernels::QuantizeParams),
                                                                   kernels::kDequantizeTableSlot + 1, 1,
                                                                   check_dequantize_s8_f32_scalar, aliasing::kElementwise};

}  // namespace mcuflow::ops
