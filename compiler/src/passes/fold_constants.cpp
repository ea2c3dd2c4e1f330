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

}  // namespace mcuflow::compiler
