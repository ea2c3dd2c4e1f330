#include "mcuflow/compiler/passes.h"

namespace mcuflow::compiler {

void remove_identities(Graph& g) {
  std::vector<bool> removed(g.ops.size(), false);
  for (size_t i = 0; i < g.ops.size(); ++i) {
    const Op& op = g.ops[i];
    if (op.kind != "identity") continue;
    // A graph input passed straight to an output still needs the op to exist as a copy.
    const bool input_to_output = g.is_graph_output(op.outputs[0]) &&
                                 (g.producer(op.inputs[0]) < 0 && !g.tensors[op.inputs[0]].constant);
    if (input_to_output) continue;
    g.replace_uses(op.outputs[0], op.inputs[0]);
    removed[i] = true;
  }
  erase_ops(g, removed);
}

}  // namespace mcuflow::compiler
