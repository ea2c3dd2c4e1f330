// Matrix products: linear (constant weights, any input rank) and matmul (two activations).
#include <algorithm>

#include "families.h"
#include "shape_helpers.h"

namespace mcuflow::compiler {
namespace {

Shape infer_linear(const Graph& g, const Op& op) {
  const Shape& x = in_shape(g, op, 0);
  const Shape& w = in_shape(g, op, 1);
  if (!g.tensors[op.inputs[1]].constant) fail(op, "weights must be constant (two activation inputs need matmul)");
  if (w.size() != 2 || x.empty() || x.back() != w[1])
    fail(op, "input " + shape_str(x) + " does not match weight " + shape_str(w));
  Shape out = x;
  out.back() = w[0];
  return out;
}

Shape infer_matmul(const Graph& g, const Op& op) {
  const Shape& a = in_shape(g, op, 0);
  const Shape& b = in_shape(g, op, 1);
  if (a.size() < 2 || b.size() != a.size()) fail(op, "expects two operands of the same rank >= 2, got " + shape_str(a) + " and " + shape_str(b));
  if (!std::equal(a.begin(), a.end() - 2, b.begin()) || a.back() != b[b.size() - 2])
    fail(op, "shapes " + shape_str(a) + " and " + shape_str(b) + " do not multiply (batch dims must be equal)");
  Shape out = a;
  out.back() = b.back();
  return out;
}

}  // namespace

std::vector<OpDef> matmul_ops() {
  return {
      {"linear", infer_linear, kFusesActivation, OutputQuant::kObserved, RowLift::kNo, ConstantQuant::kWeightsPerTensor},
      {"matmul", infer_matmul, kFusesActivation},
  };
}

}  // namespace mcuflow::compiler
