#include <algorithm>

#include "mcuflow/compiler/op_registry.h"
#include "mcuflow/compiler/passes.h"

namespace mcuflow::compiler {

void fuse_activations(Graph& g) {
  std::vector<bool> removed(g.ops.size(), false);
  for (size_t i = 0; i < g.ops.size(); ++i) {
    Op& op = g.ops[i];
    if (!has_trait(op.kind, kFusesActivation)) continue;
    // Chains such as conv → relu → clamp fuse one after the other.
    for (;;) {
      const int y = op.outputs[0];
      const auto users = g.consumers(y);
      if (users.size() != 1 || g.is_graph_output(y)) break;
      Op& act = g.ops[users[0]];
      float lo, hi;
      if (!clamp_bounds(act, lo, hi)) break;
      // clamp(clamp(x, a, b), lo, hi) == clamp(x, clamp(a, lo, hi), clamp(b, lo, hi)), also when
      // the ranges are disjoint (the output is then the constant the second clamp forces).
      op.act_min = std::clamp(op.act_min, lo, hi);
      op.act_max = std::clamp(op.act_max, lo, hi);
      op.outputs[0] = act.outputs[0];
      g.tensors[y].name += ".unused";
      act.inputs.clear();
      act.outputs.clear();
      removed[users[0]] = true;
    }
  }
  erase_ops(g, removed);
}

}  // namespace mcuflow::compiler
