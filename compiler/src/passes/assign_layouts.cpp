#include <algorithm>

#include "mcuflow/compiler/op_registry.h"
#include "mcuflow/compiler/passes.h"

namespace mcuflow::compiler {
namespace {

// Ops whose kernels read or write image tensors NHWC: their rank-4 activations are NHWC.
bool is_image_op(const Graph& g, const Op& op) {
  return has_trait(op.kind, kImageOp) ||
         (has_trait(op.kind, kImageOpOnRank4) && g.tensors[op.inputs[0]].shape.size() == 4);
}

}  // namespace

void assign_layouts(Graph& g) {
  // Rank-4 activations are NHWC when they are model inputs, meet an image op, or reach one
  // through element-wise ops; the others (such as attention's [batch, heads, tokens, dim])
  // keep PyTorch's order, which is the one matrix products and softmax work in.
  auto is_activation4 = [&](int t) { return !g.tensors[t].constant && g.tensors[t].shape.size() == 4; };
  for (Tensor& t : g.tensors) t.nhwc = false;
  for (int t : g.inputs) g.tensors[t].nhwc = is_activation4(t);
  for (const StateTensor& s : g.states) g.tensors[s.tensor].nhwc = is_activation4(s.tensor);
  for (const Op& op : g.ops) {
    if (!is_image_op(g, op)) continue;
    for (int t : op.inputs) g.tensors[t].nhwc = g.tensors[t].nhwc || is_activation4(t);
    for (int t : op.outputs) g.tensors[t].nhwc = is_activation4(t);
  }
  for (bool changed = true; changed;) {
    changed = false;
    for (const Op& op : g.ops) {
      if (!has_trait(op.kind, kLayoutAgnostic)) continue;
      std::vector<int> operands = op.inputs;
      operands.insert(operands.end(), op.outputs.begin(), op.outputs.end());
      const bool any_nhwc = std::any_of(operands.begin(), operands.end(), [&](int t) { return g.tensors[t].nhwc; });
      for (int t : operands) {
        if (any_nhwc && is_activation4(t) && !g.tensors[t].nhwc) g.tensors[t].nhwc = changed = true;
      }
    }
  }
}

}  // namespace mcuflow::compiler
