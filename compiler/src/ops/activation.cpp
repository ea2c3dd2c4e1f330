// Element-wise activations on an int8 lookup table (activation_f32 in float), and prelu.
#include "families.h"
#include "shape_helpers.h"

namespace mcuflow::compiler {
namespace {

Shape infer_prelu(const Graph& g, const Op& op) {  // x, weight: one slope, or one per channel (dim 1)
  const Shape& x = in_shape(g, op, 0);
  const Tensor& w = g.tensors[op.inputs.at(1)];
  const int64_t channels = x.size() >= 2 ? x[1] : 1;
  if (op.inputs.size() != 2 || !w.constant || (w.numel() != 1 && w.numel() != channels))
    fail(op, "expects a constant weight of 1 or " + std::to_string(channels) + " slopes");
  return x;
}

}  // namespace

std::vector<OpDef> activation_ops() {
  const auto unary = [](const char* kind) {
    return OpDef{kind, same_as_input, kLayoutAgnostic, OutputQuant::kObserved, RowLift::kElementwise};
  };
  return {
      unary("sigmoid"), unary("tanh"), unary("hardswish"), unary("hardsigmoid"), unary("silu"), unary("gelu"),
      unary("elu"), unary("leaky_relu"), unary("neg"), unary("abs"), unary("mish"),
      {"prelu", infer_prelu, kLayoutAgnostic, OutputQuant::kObserved, RowLift::kPerChannel,
       ConstantQuant::kWeightsPerTensor},
  };
}

}  // namespace mcuflow::compiler
