#include <algorithm>

#include "mcuflow/compiler/passes.h"

namespace mcuflow::compiler {

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
      // A given quantization (per tensor, or per output feature: dim 0) moves with the columns.
      const Quant quant = wt.quant;
      if (quant.per_axis() && quant.axis != 0)
        throw CompileError(linear.where() + ": a weight quantization along the input features cannot follow the flatten");
      linear.inputs[1] = g.add_constant(wt.name + ".nhwc_columns", wt.shape, std::move(permuted));
      g.tensors[size_t(linear.inputs[1])].quant = quant;
    }
    g.tensors[op.outputs[0]].nhwc = true;  // rank 2 + nhwc: the bytes of an NHWC tensor
  }
}

}  // namespace mcuflow::compiler
