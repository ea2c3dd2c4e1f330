// 1-D layers (Conv1d, its pools) reach the compiler as their 2-D ops over the one-row view
// (N, C, L) -> (N, C, 1, L) -> 2-D op -> (N, C, L'). Everything between two of them (batch
// norm, activations, residual adds, causal pads, chomps) would then run on rank-3 tensors,
// which are stored channels-first while the 2-D kernels keep images NHWC: each reshape would be
// a transposing copy, and a batch norm or pad could not fold into its convolution. This pass
// moves such ops onto the rank-4 row tensors instead, so a chain of 1-D layers stays in image
// layout from its first reshape to its last.
#include <algorithm>
#include <map>

#include "mcuflow/compiler/op_registry.h"
#include "mcuflow/compiler/passes.h"

namespace mcuflow::compiler {
namespace {

Shape row_view(const Shape& s) { return {s[0], s[1], 1, s[2]}; }

int64_t row_dim(int64_t dim) { return dim < 0 ? row_dim(dim + 3) : dim < 2 ? dim : dim + 1; }

RowLift lift_kind(const std::string& kind) {
  const OpDef* def = find_op(kind);
  return def ? def->row_lift : RowLift::kNo;
}

bool is_rank3_activation(const Graph& g, int t) { return !g.tensors[t].constant && g.tensors[t].shape.size() == 3; }

// The rank-4 tensor whose reshape `t` is, when `t` is its one-row view squeezed; else -1.
int row_source(const Graph& g, int t) {
  if (!is_rank3_activation(g, t)) return -1;
  const int p = g.producer(t);
  if (p < 0 || g.ops[p].kind != "reshape") return -1;
  const int src = g.ops[p].inputs[0];
  return g.tensors[src].shape == row_view(g.tensors[t].shape) && !g.tensors[src].constant ? src : -1;
}

// True when every reader of `t` reshapes it to its row view.
bool read_as_rows(const Graph& g, int t) {
  const auto users = g.consumers(t);
  return !users.empty() && !g.is_graph_output(t) && std::all_of(users.begin(), users.end(), [&](int u) {
    const Op& r = g.ops[u];
    return r.kind == "reshape" && g.tensors[r.outputs[0]].shape == row_view(g.tensors[t].shape);
  });
}

bool liftable(const Graph& g, const Op& op) {
  const RowLift kind = lift_kind(op.kind);
  if (kind == RowLift::kNo || op.outputs.size() != 1) return false;
  const std::vector<int> activations = kind == RowLift::kPerChannel ? std::vector<int>{op.inputs[0]} : op.inputs;
  bool from_rows = false;
  for (int t : activations) {
    if (g.tensors[t].constant) {
      if (kind != RowLift::kElementwise || g.tensors[t].shape.size() > 3) return false;
      continue;
    }
    if (!is_rank3_activation(g, t)) return false;
    from_rows = from_rows || row_source(g, t) >= 0;
  }
  if (kind == RowLift::kDims) return from_rows;  // the reduced output need not be rank 3
  return g.tensors[op.outputs[0]].shape.size() == 3 && (from_rows || read_as_rows(g, op.outputs[0]));
}

// `op` rewritten to read and write row views; reshapes to and from them around it.
void lift(Graph& g, Op op, std::vector<Op>& out) {
  const RowLift kind = lift_kind(op.kind);
  for (size_t i = 0; i < op.inputs.size(); ++i) {
    const int t = op.inputs[i];
    if (kind == RowLift::kPerChannel && i > 0) continue;  // per-channel parameters
    if (g.tensors[t].constant) {
      Shape s = g.tensors[t].shape;
      s.insert(s.begin(), 3 - s.size(), 1);
      const Quant given = g.tensors[t].quant;
      op.inputs[i] = g.add_constant(g.tensors[t].name + ".rows", row_view(s), g.tensors[t].data);
      if (given.given && !given.per_axis()) g.tensors[size_t(op.inputs[i])].quant = given;  // (a PT2E constant operand)
      continue;
    }
    int rows = row_source(g, t);
    if (rows < 0) {
      Tensor view;
      view.name = g.tensors[t].name + ".rows";
      view.shape = row_view(g.tensors[t].shape);
      if (g.tensors[t].quant.given) view.quant = g.tensors[t].quant;
      rows = g.add_tensor(view);
      out.push_back(Op{"reshape", {t}, {rows}, {{"shape", view.shape}}, op.source});
    }
    op.inputs[i] = rows;
  }
  if (kind == RowLift::kPad) {  // (before, after) pairs from the last dim: the row dim gets none
    const auto& pad = op.ints_attr("pad");
    std::vector<int64_t> rows_pad(pad.begin(), pad.begin() + std::min<size_t>(2, pad.size()));
    if (pad.size() > 2) {
      rows_pad.insert(rows_pad.end(), {0, 0});
      rows_pad.insert(rows_pad.end(), pad.begin() + 2, pad.end());
    }
    op.attrs["pad"] = rows_pad;
  } else if (kind == RowLift::kDim) {
    op.attrs["dim"] = row_dim(op.int_attr("dim"));
  } else if (kind == RowLift::kDims) {
    std::vector<int64_t> dims;
    for (int64_t d : op.ints_attr("dims")) dims.push_back(row_dim(d));
    // Over L, the size-1 row dim too: a mean over both is the global average pool kernel.
    if (dims.empty() || std::count(dims.begin(), dims.end(), 3)) dims.push_back(2);
    if (op.ints_attr("dims").empty()) dims = {0, 1, 2, 3};
    std::sort(dims.begin(), dims.end());
    op.attrs["dims"] = dims;
    op.attrs["keepdim"] = int64_t{1};  // the reshape after it drops what PyTorch drops
  }
  const int y = op.outputs[0];
  Tensor rows_out;
  rows_out.name = g.tensors[y].name + ".rows";
  rows_out.shape = infer_shapes(g, op)[0];
  if (g.tensors[y].quant.given) rows_out.quant = g.tensors[y].quant;  // a view keeps the given spec
  const int rows_y = g.add_tensor(rows_out);
  op.outputs[0] = rows_y;
  const std::string source = op.source;
  out.push_back(std::move(op));
  out.push_back(Op{"reshape", {rows_y}, {y}, {{"shape", g.tensors[y].shape}}, source});
}

// A reshape of a reshape reads the first one's input; a reshape to its input's shape goes, and
// so does a second reshape of one tensor to one shape (a residual input and its layer's view).
void collapse_reshapes(Graph& g) {
  std::vector<bool> removed(g.ops.size(), false);
  std::map<std::pair<int, Shape>, int> views;  // (input, shape) -> the first reshape's output
  for (size_t i = 0; i < g.ops.size(); ++i) {
    Op& r = g.ops[i];
    if (r.kind != "reshape") continue;
    const int p = g.producer(r.inputs[0]);
    if (p >= 0 && g.ops[p].kind == "reshape") r.inputs[0] = g.ops[p].inputs[0];
    const int in = r.inputs[0], y = r.outputs[0];
    if (g.is_graph_output(y)) continue;
    const auto [view, first] = views.emplace(std::make_pair(in, g.tensors[y].shape), y);
    if (g.tensors[in].shape != g.tensors[y].shape && first) continue;
    g.replace_uses(y, g.tensors[in].shape == g.tensors[y].shape ? in : view->second);
    removed[i] = true;
  }
  erase_ops(g, removed);
  remove_dead_ops(g);
}

}  // namespace

void lift_rows(Graph& g) {
  for (bool changed = true; changed;) {
    changed = false;
    std::vector<Op> ops;
    for (size_t i = 0; i < g.ops.size(); ++i) {
      if (!liftable(g, g.ops[i])) {
        ops.push_back(g.ops[i]);
        continue;
      }
      lift(g, g.ops[i], ops);
      changed = true;
    }
    g.ops = std::move(ops);
    collapse_reshapes(g);
  }
}

}  // namespace mcuflow::compiler
