#include <algorithm>

#include "mcuflow/compiler/passes.h"

namespace mcuflow::compiler {

void remove_dead_ops(Graph& g) {
  // Walk backwards so a chain of dead ops disappears in one pass.
  std::vector<bool> removed(g.ops.size(), false);
  std::vector<bool> needed(g.tensors.size(), false);
  for (int t : g.outputs) needed[t] = true;
  for (const StateTensor& s : g.states) needed[s.update] = true;
  for (int i = int(g.ops.size()) - 1; i >= 0; --i) {
    const Op& op = g.ops[i];
    const bool live = std::any_of(op.outputs.begin(), op.outputs.end(), [&](int t) { return needed[t]; });
    if (!live) {
      removed[i] = true;
      continue;
    }
    for (int t : op.inputs) needed[t] = true;
  }
  erase_ops(g, removed);
}

}  // namespace mcuflow::compiler
