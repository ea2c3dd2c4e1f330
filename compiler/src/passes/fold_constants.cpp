#include <algorithm>

#include "mcuflow/compiler/op_registry.h"
#include "mcuflow/compiler/passes.h"

namespace mcuflow::compiler {
namespace {

std::vector<int64_t> strides_of(const Shape& s) {
  std::vector<int64_t> st(s.size(), 1);
  for (int i = int(s.size()) - 2; i >= 0; --i) st[i] = st[i + 1] * s[i + 1];
  return st;
}

std::vector<float> evaluate(const Graph& g, const Op& op, const Shape& out_shape) {
  const Tensor& x = g.tensors[op.inputs[0]];
  int64_t n = 1;
  for (int64_t d : out_shape) n *= d;
  std::vector<float> out(n);
  if (op.kind == "reshape" || op.kind == "identity") return x.data;
  if (op.kind == "permute") {
    const auto& perm = op.ints_attr("perm");
    const auto in_strides = strides_of(x.shape), out_strides = strides_of(out_shape);
    for (int64_t i = 0; i < n; ++i) {
      int64_t src = 0;
      for (size_t d = 0; d < out_shape.size(); ++d) {
        const int64_t p = perm[d] < 0 ? perm[d] + int64_t(perm.size()) : perm[d];
        src += ((i / out_strides[d]) % out_shape[d]) * in_strides[p];
      }
      out[i] = x.data[src];
    }
    return out;
  }
  const Tensor& y = g.tensors[op.inputs[1]];
  for (int64_t i = 0; i < n; ++i) {
    const float a = x.data[broadcast_index(out_shape, x.shape, i)];
    const float b = y.data[broadcast_index(out_shape, y.shape, i)];
    out[i] = op.kind == "add" ? a + b : a * b;
  }
  return out;
}

bool foldable(const Graph& g, const Op& op) {
  if (!has_trait(op.kind, kFoldable)) return false;
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
    out.data = evaluate(g, op, out.shape);
    out.constant = true;
    removed[i] = true;
  }
  erase_ops(g, removed);
}

void remove_dead_ops(Graph& g) {
  // Walk backwards so a chain of dead ops disappears in one pass.
  std::vector<bool> removed(g.ops.size(), false);
  std::vector<bool> needed(g.tensors.size(), false);
  for (int t : g.outputs) needed[t] = true;
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

void fold_flatten_into_linear(Graph& g) {
  for (Op& op : g.ops) {
    if (op.kind != "reshape") continue;
    const Tensor& x = g.tensors[op.inputs[0]];
    Tensor& y = g.tensors[op.outputs[0]];
    if (!x.nhwc || y.shape.size() != 2 || y.shape[0] != x.shape[0] || g.is_graph_output(op.outputs[0])) continue;
    const int64_t c = x.shape[1], h = x.shape[2], w = x.shape[3];
    if (c == 1 || h * w == 1) continue;  // NHWC bytes already equal NCHW bytes
    const auto users = g.consumers(op.outputs[0]);
    const bool all_linear = !users.empty() && std::all_of(users.begin(), users.end(), [&](int u) {
      return g.ops[u].kind == "linear" && g.ops[u].inputs[0] == op.outputs[0];
    });
    if (!all_linear) continue;
    for (int u : users) {
      Op& linear = g.ops[u];
      const Tensor& wt = g.tensors[linear.inputs[1]];
      const int64_t out_features = wt.shape[0];
      std::vector<float> permuted(wt.data.size());
      // Column (c, y, x) of the PyTorch weight moves to the NHWC position (y, x, c).
      for (int64_t o = 0; o < out_features; ++o)
        for (int64_t ci = 0; ci < c; ++ci)
          for (int64_t yi = 0; yi < h; ++yi)
            for (int64_t xi = 0; xi < w; ++xi)
              permuted[o * c * h * w + (yi * w + xi) * c + ci] = wt.data[o * c * h * w + (ci * h + yi) * w + xi];
      linear.inputs[1] = g.add_constant(wt.name + ".nhwc_columns", wt.shape, std::move(permuted));
    }
    g.tensors[op.outputs[0]].nhwc = true;  // rank 2 + nhwc: the bytes of an NHWC tensor
  }
}

}  // namespace mcuflow::compiler
