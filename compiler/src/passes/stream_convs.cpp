// Streaming convolution (docs/streaming.md): a state S holding the last frames of a
// convolution's input, written the PyTorch way as
//   window = cat([S, x], time); S = window[time: T:]; y = conv(window)
// (mcuflow.streaming), becomes a convolution over x with S as its ring state: the program
// appends each run's frames to the ring and the convolution reads its window there, instead of
// building the window and copying its last frames back each run.
#include "mcuflow/compiler/passes.h"

namespace mcuflow::compiler {
namespace {

// The op reading `tensor` other than `except`, when there is exactly one.
int only_other_consumer(const Graph& g, int tensor, int except) {
  int found = -1;
  for (int c : g.consumers(tensor)) {
    if (c == except) continue;
    if (found >= 0) return -1;
    found = c;
  }
  return found;
}

// A reshape of (1, C, L) into its (1, C, 1, L) row view (how Conv1d reaches conv2d).
bool is_row_view(const Graph& g, const Op& op) {
  if (op.kind != "reshape") return false;
  const Shape& in = g.tensors[size_t(op.inputs[0])].shape;
  const Shape& out = g.tensors[size_t(op.outputs[0])].shape;
  return in.size() == 3 && out == Shape{in[0], in[1], 1, in[2]};
}

// Rewrites state `s` into the ring of the conv that reads cat([S, x]) whole, when the pattern
// matches; false leaves the graph as it was.
bool stream_one(Graph& g, StateTensor& s) {
  const int slice_op = g.producer(s.update);
  if (slice_op < 0 || g.ops[size_t(slice_op)].kind != "slice" || g.is_graph_output(g.ops[size_t(slice_op)].inputs[0]))
    return false;
  const Op& slice = g.ops[size_t(slice_op)];
  const int window = slice.inputs[0];
  const int cat_op = g.producer(window);
  if (cat_op < 0 || g.ops[size_t(cat_op)].kind != "cat") return false;
  const Op& cat = g.ops[size_t(cat_op)];
  const Shape& state = g.tensors[size_t(s.tensor)].shape;
  const size_t rank = state.size();
  const int64_t dim = slice.int_attr("dim");
  if (cat.inputs.size() != 2 || cat.inputs[0] != s.tensor || cat.int_attr("dim") != dim || dim != 2 || rank < 3 ||
      state[0] != 1)
    return false;
  const int x = cat.inputs[1];
  const int64_t length = g.tensors[size_t(window)].shape[size_t(dim)], kept = state[size_t(dim)];
  if (slice.int_attr("step") != 1 || slice.int_attr("start") != length - kept || slice.int_attr("end") != length)
    return false;
  // The window feeds one conv2d, directly ((1, C, T, F): time on H) or through its row view
  // ((1, C, T) Conv1d: time on W of one row).
  int reader = only_other_consumer(g, window, slice_op);
  if (reader < 0) return false;
  int row_view = -1;
  if (rank == 3 && is_row_view(g, g.ops[size_t(reader)])) {
    row_view = reader;
    const int rows = g.ops[size_t(row_view)].outputs[0];
    if (g.consumers(rows).size() != 1 || g.is_graph_output(rows)) return false;
    reader = g.consumers(rows)[0];
  } else if (rank != 4) {
    return false;
  }
  Op& conv = g.ops[size_t(reader)];
  if (conv.kind != "conv2d" || conv.has_attr("padding_end")) return false;
  const size_t time = rank == 3 ? 1 : 0;  // of conv's (H, W) pairs
  const auto stride = conv.ints_attr("stride"), pad = conv.ints_attr("padding");
  if (stride.at(time) != 1 || pad.at(time) != 0) return false;  // the window is exactly history + frames

  if (row_view >= 0) {  // the row view now reshapes the frames
    Op& view = g.ops[size_t(row_view)];
    const Shape& frames = g.tensors[size_t(x)].shape;
    Tensor rows = g.tensors[size_t(view.outputs[0])];
    rows.name += ".frames";
    rows.shape = {frames[0], frames[1], 1, frames[2]};
    view.inputs = {x};
    view.attrs["shape"] = std::vector<int64_t>(rows.shape.begin(), rows.shape.end());
    view.outputs = {g.add_tensor(std::move(rows))};
    conv.inputs[0] = view.outputs[0];
  } else {
    conv.inputs[0] = x;
  }
  conv.attrs["ring_state"] = int64_t(s.tensor);
  conv.attrs["ring_frames"] = kept;
  conv.attrs["ring_axis"] = int64_t(rank == 3 ? 3 : 2);  // of the conv's (N, C, H, W) input
  s.update = x;
  s.ring = true;
  return true;
}

}  // namespace

void stream_convs(Graph& g) {
  for (StateTensor& s : g.states) stream_one(g, s);
}

}  // namespace mcuflow::compiler
