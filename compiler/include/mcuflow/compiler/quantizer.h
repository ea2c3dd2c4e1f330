// Post-training quantization: activation ranges observed on calibration data become per-tensor
// asymmetric int8 parameters (DESIGN.md "Integer arithmetic").
#pragma once
#include "mcuflow/compiler/ir.h"

namespace mcuflow::compiler {

// Widens `t`'s observed range with `n` calibration values.
void observe_range(Tensor& t, const float* values, size_t n);

// Asymmetric int8 quantization covering [lo, hi] ∪ {0}.
Quant quant_for_range(float lo, float hi);

// Gives every activation tensor its Quant, in execution order: ops that must keep their
// input's quantization (pooling, views, standalone clamps) inherit it; softmax outputs get
// 1/256 and -128; the rest come from their observed ranges.
void assign_quantization(Graph& g);

}  // namespace mcuflow::compiler
