// Host-side quantization math: turns real-valued scales into the integer parameters the int8
// kernels consume (docs/quantization.md "Integer arithmetic"; TFLite int8 conventions).
#pragma once
#include <cstdint>

#include "mcuflow/kernels/params.h"

namespace mcuflow::compiler {

struct QuantizedMultiplier {
  int32_t multiplier;  // Q31, in [2^30, 2^31), or 0 when the real multiplier is 0
  int32_t shift;       // > 0 left shift, <= 0 right shift by -shift
};

// real = multiplier * 2^(shift - 31)
QuantizedMultiplier quantize_multiplier(double real_multiplier);

// add_s8 / add_s16: the TFLite scheme (both inputs rescaled to twice the larger input scale
// with left_shift bits of headroom: 20 for int8, 15 for int16, whose |x| <= 2^15 keeps the
// shifted value within int32).
constexpr int kAddLeftShiftS8 = 20;
constexpr int kAddLeftShiftS16 = 15;
struct AddRescale {
  int32_t left_shift;
  QuantizedMultiplier input1, input2, output;
};
AddRescale add_rescale(double in1_scale, double in2_scale, double out_scale, int left_shift = kAddLeftShiftS8);
// Writes r into the add kernels' rescale fields (shift, both inputs, output).
void set_add_rescale(kernels::BinaryParams& p, const AddRescale& r);

// compare_s8: each positive float32 scale as its 24-bit significand and its exponent above the
// smaller one (clamped, CompareParams), so that the kernel orders real values exactly.
void set_compare_rescale(kernels::CompareParams& p, float in1_scale, float in2_scale);

// mul_s8: one multiplier in1_scale*in2_scale/out_scale.
QuantizedMultiplier mul_rescale(double in1_scale, double in2_scale, double out_scale);

// softmax_s8 with beta = 1: input multiplier/left shift (5 integer bits) and diff_min.
struct SoftmaxRescale {
  int32_t input_multiplier, input_left_shift, diff_min;
};
SoftmaxRescale softmax_rescale(double input_scale, double beta = 1.0);

}  // namespace mcuflow::compiler
