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

// True when rank-3 `t` (N, C, L) is read only as its NHWC row view (N, C, 1, L): the reshape
// between them moves no bytes when `t` is stored (N, L, C).
bool read_only_as_nhwc_rows(const Graph& g, int t) {
  const Shape& s = g.tensors[t].shape;
  if (g.tensors[t].constant || s.size() != 3) return false;
  const Shape rows = {s[0], s[1], 1, s[2]};
  for (int u : g.consumers(t)) {
    const Op& r = g.ops[u];
    if (r.kind != "reshape" || g.tensors[r.outputs[0]].shape != rows || !g.tensors[r.outputs[0]].nhwc) return false;
  }
  return true;
}

// True when rank-3 `t` is written as the reshape of an NHWC row view (N, C, 1, L).
bool written_from_nhwc_rows(const Graph& g, int t) {
  const int p = g.producer(t);
  if (p < 0 || g.ops[p].kind != "reshape") return false;
  const Tensor& rows = g.tensors[g.ops[p].inputs[0]];
  const Shape& s = g.tensors[t].shape;
  return s.size() == 3 && rows.nhwc && rows.shape == Shape{s[0], s[1], 1, s[2]};
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
  // The (N, C, L) inputs and outputs of 1-D layers are channels last, as images are NHWC: the
  // application's bytes are the row views' own, with no transposing copy at the boundary.
  for (int t : g.inputs) {
    if (read_only_as_nhwc_rows(g, t) && !g.consumers(t).empty()) g.tensors[t].nhwc = true;
  }
  for (int t : g.outputs) {
    if (written_from_nhwc_rows(g, t) && read_only_as_nhwc_rows(g, t) && g.tensors[t].element == Element::kReal)
      g.tensors[t].nhwc = true;
  }
}

}  // namespace mcuflow::compiler
