// Normalizations: batch_norm (folded into a convolution or lowered to mul + add by the graph
// passes), layer_norm and group_norm (GroupNorm, InstanceNorm).
#include "families.h"
#include "shape_helpers.h"

namespace mcuflow::compiler {
namespace {

Shape infer_batch_norm(const Graph& g, const Op& op) {
  const Shape& x = in_shape(g, op, 0);
  if (op.inputs.size() != 5 || x.size() < 2) fail(op, "expects input, weight, bias, mean, var");
  for (size_t i = 1; i < 5; ++i) {
    const Tensor& t = g.tensors[op.inputs[i]];
    if (!t.constant || t.numel() != x[1]) fail(op, "statistics must be constants with one value per channel");
  }
  return x;
}

// The affine parameters (inputs 1 and 2) are constants of shape [channels]; `what` says which dim.
void require_affine(const Graph& g, const Op& op, int64_t channels, const std::string& what) {
  for (size_t i = 1; i < 3; ++i) {
    const Tensor& t = g.tensors[op.inputs[i]];
    if (!t.constant || t.shape != Shape{channels}) fail(op, what + "weight and bias must be constants of shape [" + std::to_string(channels) + "]");
  }
}

Shape infer_layer_norm(const Graph& g, const Op& op) {
  const Shape& x = in_shape(g, op, 0);
  if (op.inputs.size() != 3 || x.empty()) fail(op, "expects input, weight and bias");
  if (!(op.float_attr("eps") >= 0)) fail(op, "eps must not be negative");
  require_affine(g, op, x.back(), "normalizes the last dim only: ");
  return x;
}

Shape infer_group_norm(const Graph& g, const Op& op) {
  const Shape& x = in_shape(g, op, 0);
  if (op.inputs.size() != 3 || x.size() < 2) fail(op, "expects an input of rank >= 2 (N, C, ...), weight and bias");
  const int64_t groups = op.int_attr("groups");
  if (groups < 1 || x[1] % groups != 0)
    fail(op, std::to_string(x[1]) + " channels do not split into " + std::to_string(groups) + " groups");
  if (!(op.float_attr("eps") >= 0)) fail(op, "eps must not be negative");
  require_affine(g, op, x[1], "");
  return x;
}

}  // namespace

std::vector<OpDef> norm_ops() {
  return {
      {"batch_norm", infer_batch_norm, kLayoutAgnostic, OutputQuant::kObserved, RowLift::kPerChannel},
      {"layer_norm", infer_layer_norm},
      {"group_norm", infer_group_norm, kImageOp},
  };
}

}  // namespace mcuflow::compiler
