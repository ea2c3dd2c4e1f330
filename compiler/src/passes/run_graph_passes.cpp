#include "mcuflow/compiler/passes.h"

namespace mcuflow::compiler {

void erase_ops(Graph& g, const std::vector<bool>& removed) {
  std::vector<Op> kept;
  kept.reserve(g.ops.size());
  for (size_t i = 0; i < g.ops.size(); ++i) {
    if (!removed[i]) kept.push_back(std::move(g.ops[i]));
  }
  g.ops = std::move(kept);
}

void run_graph_passes(Graph& g) {
  remove_identities(g);
  stream_convs(g);  // before lift_rows moves the window's cat onto row views
  lift_rows(g);
  fold_pads(g);
  fold_batch_norm(g);
  lower_batch_norm(g);
  fuse_activations(g);
  fold_constants(g);
  remove_dead_ops(g);
  assign_layouts(g);
  fold_flatten_into_linear(g);
}

}  // namespace mcuflow::compiler
