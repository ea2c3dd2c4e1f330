#include <algorithm>

#include "mcuflow/compiler/op_registry.h"
#include "mcuflow/compiler/passes.h"

namespace mcuflow::compiler {
namespace {

bool foldable(const Graph& g, const Op& op) {
  const OpDef* def = find_op(op.kind);
  if (def == nullptr || def->fold == nullptr) return false;
  if (op.act_min > -1e38f || op.act_max < 1e38f) return false;  // a fused activation: keep the op
  return std::all_of(op.inputs.begin(), op.inputs.end(), [&](int t) { return g.tensors[t].constant; });
}

}  // namespace

void fold_constants(Graph& g) {
  std::vector<bool> removed(g.ops.size(), false);
  for (size_t i = 0; i < g.ops.size(); ++i) {
    const Op& op = g.ops[i];
    if (!foldable(g, op)) continue;
    Tensor& out = g.tensors[op.outputs[0]];
    out.data = find_op(op.kind)->fold(g, op, out.shape);
    out.constant = true;
    removed[i] = true;
  }
  erase_ops(g, removed);
}

}  // namespace mcuflow::compiler
