#include <algorithm>
#include <limits>

#include "mcuflow/compiler/passes.h"

namespace mcuflow::compiler {

void fuse_activations(Graph& g) {
  std::vector<bool> removed(g.ops.size(), false);
  for (size_t i = 0; i < g.ops.size(); ++i) {
    Op& op = g.ops[i];
    static const char* kFusing[] = {"conv2d", "linear", "add", "mul", "sub", "minimum", "maximum", "conv_transpose2d", "matmul"};
    if (std::find(std::begin(kFusing), std::end(kFusing), op.kind) == std::end(kFusing)) continue;
    // Chains such as conv → relu → clamp fuse one after the other.
    for (;;) {
      const int y = op.outputs[0];
      const auto users = g.consumers(y);
      if (users.size() != 1 || g.is_graph_output(y)) break;
      Op& act = g.ops[users[0]];
      float lo, hi;
      if (act.kind == "relu") {
        lo = 0.0f;
        hi = std::numeric_limits<float>::infinity();
      } else if (act.kind == "clamp") {
        lo = float(act.float_attr("min"));
        hi = float(act.float_attr("max"));
      } else {
        break;
      }
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
