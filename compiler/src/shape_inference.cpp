// Shape inference: the op's registered shape rule (compiler/src/ops/), and the limits of the
// program format on every activation it reads or writes.
#include "mcuflow/compiler/ir.h"
#include "mcuflow/compiler/op_registry.h"
#include "mcuflow/runtime/format.h"
#include "ops/shape_helpers.h"

namespace mcuflow::compiler {
namespace {

// Activations a program can hold: at most format::kMaxRank dims of at most format::kMaxDim.
void require_representable(const Op& op, const std::string& what, const Shape& s) {
  if (s.size() > format::kMaxRank)
    fail(op, what + " " + shape_str(s) + " has " + std::to_string(s.size()) + " dims; at most " +
                 std::to_string(format::kMaxRank) + " are supported");
  for (int64_t d : s) {
    if (d > format::kMaxDim)
      fail(op, what + " " + shape_str(s) + " has a dim larger than " + std::to_string(format::kMaxDim));
  }
}

}  // namespace

std::vector<Shape> infer_shapes(const Graph& g, const Op& op) {
  const OpDef* def = find_op(op.kind);
  if (def == nullptr) {
    std::string supported;
    for (const std::string& kind : frontend_kinds()) supported += (supported.empty() ? "" : ", ") + kind;
    fail(op, "unsupported op; supported: " + supported);
  }
  for (int input : op.inputs) {
    if (input < 0 || input >= static_cast<int>(g.tensors.size())) fail(op, "input tensor id out of range");
    const Tensor& t = g.tensors[size_t(input)];
    if (!t.constant) require_representable(op, "input " + t.name, t.shape);
  }
  const Shape out = def->shape(g, op);
  require_representable(op, "output", out);
  return {out};
}

}  // namespace mcuflow::compiler
