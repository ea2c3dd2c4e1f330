// The parts of a tier kernel's contract every tier states the same way. Each tier kernel states
// its contract once, in the portable half of its tier header (kernels_scalar.h, kernels_dsp.h,
// kernels_mve.h), which the compiler (compiler/src/tiers/<tier>_rules.cpp) and the load-time
// verifier (runtime/src/ops/<tier>/) both read: the params it refuses (a function returning a
// Refusal), its input slots by name, its scratch size, and the order it reads and writes in
// (aliasing::Walk, runtime/include/mcuflow/runtime/aliasing.h).
#pragma once
#include <cstdint>

#include "mcuflow/kernels/int4_weights.h"
#include "mcuflow/kernels/params.h"

namespace mcuflow::kernels {

// Why a tier kernel cannot take an op's params; kNone when it can. The verifier refuses a
// program on any other code (kBadParams); the compiler words each code in the op's reason.
enum class Refusal : uint8_t {
  kNone,
  kKernelSize,         // not the window size the kernel is written for (1x1, 3x3)
  kPadding,            // needs no padding
  kGridOutsideInput,   // a 1x1 conv whose strided output grid reaches past its input
  kWindowDepth,        // window positions k_h * k_w * in_c outside the kernel's range
  kInputChannels,      // in_c (input features of a linear layer) outside the kernel's range
  kChannelMultiplier,  // needs channel multiplier 1
  kTaps,               // more window taps (k_h * k_w) than the kernel holds
  kStride,             // needs horizontal stride 1
  kDilation,           // needs no dilation
  kPoolWindow,         // more values per pooling window than its exact reciprocals cover
  kAddRange,           // rescaled inputs whose doubled, left-shifted sum overflows int32
  kMulRange,           // an offset product whose doubled, left-shifted value overflows int32
  kScale,              // a scale the kernel's float arithmetic cannot use (denormal)
  kGroups,             // a grouped convolution (groups > 1)
  kReduceMax,          // a maximum: the reduce tier kernels sum (a sum or a mean)
  kWeightCount,        // more int4 weights than the scratch unpacks them into (kW4MaxUnpacked)
  kOutputChannels,     // more output channels than the kernel addresses
};

// Input slots of the weighted reference kernels (conv_s8, dwconv_s8, fc_s8), which their tier
// kernels keep in front of their own. The weights, bias and requantization tables must be
// program constants for every tier kernel that replaces them: the kernels (or the inputs the
// compiler prepared from them) rely on their values.
enum WeightedSlot : uint8_t { kInputSlot, kWeightsSlot, kBiasSlot, kMultipliersSlot, kShiftsSlot, kWeightedSlots };
constexpr uint8_t kFirstConstantSlot = kWeightsSlot, kLastConstantSlot = kShiftsSlot;

// A 1x1 conv kernel reads input pixel (oy * stride_h, ox * stride_w) for output pixel (oy, ox),
// without bounds checks.
inline Refusal pointwise_refusal(const ConvParams& p) {
  if (p.groups != 1) return Refusal::kGroups;
  if (p.k_h != 1 || p.k_w != 1) return Refusal::kKernelSize;
  if (p.pad_top != 0 || p.pad_left != 0) return Refusal::kPadding;
  if (int64_t(p.out_h - 1) * p.stride_h >= p.in_h || int64_t(p.out_w - 1) * p.stride_w >= p.in_w)
    return Refusal::kGridOutsideInput;
  return Refusal::kNone;
}

// The float32 window kernels of every tier take one group, the depthwise ones channel multiplier 1.
inline Refusal ungrouped_refusal(const ConvParams& p) { return p.groups == 1 ? Refusal::kNone : Refusal::kGroups; }
inline Refusal unit_multiplier_refusal(const DwConvParams& p) {
  return p.ch_mult == 1 ? Refusal::kNone : Refusal::kChannelMultiplier;
}

// The reduce tier kernels of every tier (reduce_s8_scalar, reduce_s8_dsp, reduce_s8_mve) sum:
// a sum or a mean; a maximum stays on reduce_s8.
inline Refusal reduce_sum_refusal(const ReduceParams& p) {
  return p.op == kReduceMax ? Refusal::kReduceMax : Refusal::kNone;
}

// The int4-weight tier kernels unpack an op's weights into their scratch (int4_weights.h): at
// most this many (a quarter MiB of arena, more than any microcontroller model needs).
constexpr int32_t kW4MaxUnpacked = 1 << 18;
inline Refusal w4_weights_refusal(int64_t weight_count) {
  return weight_count > kW4MaxUnpacked ? Refusal::kWeightCount : Refusal::kNone;
}

}  // namespace mcuflow::kernels
