// Patch-based execution (MCUNetV2's idea; docs/memory_planning.md): the chain of convolutions
// that starts at a graph input runs in horizontal bands, so its large early feature maps never
// exist whole. Each band slices the input rows its receptive field needs (its own rows and a
// halo), runs copies of the stage's convolutions on them with padding only at the image borders,
// and writes its rows of the stage output through a cat along H. The copies keep the weights,
// attributes, fused activations and quantization of the ops they copy, and every output pixel
// reads the same input values with the same arithmetic: the result is bit-exact.
#include <algorithm>

#include "mcuflow/compiler/passes.h"

namespace mcuflow::compiler {
namespace {

constexpr int64_t kH = 2;  // the H dim of a logical NCHW shape

struct Rows {
  int64_t begin = 0, end = 0;
  int64_t count() const { return end - begin; }
};

// An H/W pair attribute: absent or empty is `fallback`, one value stands for both.
std::vector<int64_t> hw_attr(const Op& op, const std::string& name, const std::vector<int64_t>& fallback) {
  std::vector<int64_t> v = op.has_attr(name) && !op.ints_attr(name).empty() ? op.ints_attr(name) : fallback;
  if (v.size() == 1) v.push_back(v[0]);
  return v;
}

// One convolution of a band: the input rows it reads (inside the input) and the padding rows the
// window needs above and below them, for output rows `out`.
struct BandStep {
  Rows in;
  int64_t pad_top = 0, pad_bottom = 0;
};

BandStep band_step(const Graph& g, const Op& conv, Rows out) {
  const int64_t stride = hw_attr(conv, "stride", {1})[0], dilation = hw_attr(conv, "dilation", {1})[0];
  const int64_t pad_top = hw_attr(conv, "padding", {0})[0];
  const int64_t taps = g.tensors[conv.inputs[1]].shape[kH], in_h = g.tensors[conv.inputs[0]].shape[kH];
  const int64_t first = out.begin * stride - pad_top;                                 // may lie in the padding
  const int64_t end = (out.end - 1) * stride - pad_top + dilation * (taps - 1) + 1;  // exclusive
  BandStep s;
  s.in = Rows{std::max<int64_t>(0, first), std::min(in_h, end)};
  s.pad_top = s.in.begin - first;
  s.pad_bottom = end - s.in.end;
  return s;
}

// The convolutions from graph input `x` on, each reading (as input 0) the previous one's output,
// which nothing else reads: NHWC activations of batch 1 (their rows are contiguous bytes).
std::vector<int> conv_chain(const Graph& g, int x) {
  std::vector<int> chain;
  auto band_friendly = [&](int t) { return g.tensors[t].nhwc && g.tensors[t].shape.size() == 4 && g.tensors[t].shape[0] == 1; };
  if (!band_friendly(x)) return chain;
  for (int t = x;;) {
    const std::vector<int> users = g.consumers(t);
    if (users.size() != 1 || (t != x && g.is_graph_output(t))) break;
    const Op& op = g.ops[size_t(users[0])];
    if (op.kind != "conv2d" || op.inputs[0] != t || op.outputs.size() != 1 || !band_friendly(op.outputs[0])) break;
    chain.push_back(users[0]);
    t = op.outputs[0];
  }
  return chain;
}

int64_t row_bytes(const Graph& g, int t, int64_t element) {
  const Tensor& x = g.tensors[size_t(t)];
  return x.numel() / x.shape[kH] * element;
}

// Rows of the output of each op of `stage` (the last first) that band `out` of the stage output
// needs, and the input rows of its first op.
std::vector<BandStep> band_steps(const Graph& g, const std::vector<int>& stage, Rows out) {
  std::vector<BandStep> steps(stage.size());
  for (size_t j = stage.size(); j-- > 0;) {
    steps[j] = band_step(g, g.ops[size_t(stage[j])], out);
    out = steps[j].in;
  }
  return steps;
}

std::vector<Rows> split_rows(int64_t rows, int bands) {
  std::vector<Rows> out;
  for (int b = 0; b < bands; ++b) out.push_back(Rows{rows * b / bands, rows * (b + 1) / bands});
  return out;
}

// Estimated peak bytes when the first `length` ops of `chain` run in `bands` bands (none: no
// bands): every op outside the stage holds its activation inputs and outputs; the stage holds
// its input and output whole (band slices and band outputs lie inside them, the planner's
// embeddings) and one band op's input and output rows at a time. A streamed input is never
// whole: its band rows count instead.
int64_t estimated_peak(const Graph& g, const std::vector<int>& chain, size_t length, int bands, int64_t element,
                       bool stream_input) {
  const std::vector<int> stage(chain.begin(), chain.begin() + long(length));
  int64_t peak = 0;
  for (size_t i = 0; i < g.ops.size(); ++i) {
    if (std::find(stage.begin(), stage.end(), int(i)) != stage.end()) continue;
    int64_t bytes = 0;
    for (int t : g.ops[i].inputs) bytes += g.tensors[size_t(t)].constant ? 0 : g.tensors[size_t(t)].numel() * element;
    for (int t : g.ops[i].outputs) bytes += g.tensors[size_t(t)].numel() * element;
    peak = std::max(peak, bytes);
  }
  if (stage.empty()) return peak;
  const int x = g.ops[size_t(stage[0])].inputs[0], y = g.ops[size_t(stage.back())].outputs[0];
  const int64_t whole = ((stream_input ? 0 : g.tensors[size_t(x)].numel()) + g.tensors[size_t(y)].numel()) * element;
  for (const Rows& rows : split_rows(g.tensors[size_t(y)].shape[kH], bands)) {
    const std::vector<BandStep> steps = band_steps(g, stage, rows);
    for (size_t j = 0; j < stage.size(); ++j) {
      const Op& op = g.ops[size_t(stage[j])];
      const int64_t in = j == 0 && !stream_input ? 0 : steps[j].in.count() * row_bytes(g, op.inputs[0], element);
      const int64_t out = j + 1 == stage.size() ? 0 : steps[j + 1].in.count() * row_bytes(g, op.outputs[0], element);
      peak = std::max(peak, whole + in + out);
    }
  }
  return peak;
}

}  // namespace

void split_into_patches(Graph& g, int patches, int64_t element_bytes, bool stream_input) {
  if (patches < 1) throw CompileError("patches must be at least 1, got " + std::to_string(patches));
  if (patches == 1 || g.inputs.empty()) return;
  const std::vector<int> chain = conv_chain(g, g.inputs[0]);
  if (chain.empty()) return;
  // The stage end with the lowest estimated peak, if it is lower than without bands; on a tie
  // the shorter stage (less recomputed).
  size_t length = 0;
  int64_t best = estimated_peak(g, {}, 0, 1, element_bytes, false);
  for (size_t n = 1; n <= chain.size(); ++n) {
    const int64_t rows = g.tensors[g.ops[size_t(chain[n - 1])].outputs[0]].shape[kH];
    if (rows < patches) break;
    const int64_t peak = estimated_peak(g, chain, n, patches, element_bytes, stream_input);
    if (peak < best) best = peak, length = n;
  }
  if (length == 0) return;
  const std::vector<int> stage(chain.begin(), chain.begin() + long(length));
  const int x = g.inputs[0];
  const int stage_out = g.ops[size_t(stage.back())].outputs[0];
  const int64_t out_rows = g.tensors[stage_out].shape[kH];
  if (out_rows < patches) return;

  std::vector<Op> band_ops;
  Op cat;
  cat.kind = "cat";
  cat.attrs["dim"] = kH;
  cat.outputs = {stage_out};
  cat.source = g.ops[size_t(stage.back())].source;
  int b = 0;
  for (const Rows& rows : split_rows(out_rows, patches)) {
    const std::vector<BandStep> steps = band_steps(g, stage, rows);
    const std::string band = ".band" + std::to_string(b++);
    auto band_tensor = [&](int like, int64_t count) {
      Tensor t = g.tensors[size_t(like)];
      t.name += band;
      t.shape[kH] = count;
      return g.add_tensor(std::move(t));
    };
    Op slice;
    slice.kind = stream_input ? "input_rows" : "slice";
    slice.attrs = {{"dim", kH}, {"start", steps[0].in.begin}, {"end", steps[0].in.end}, {"step", int64_t{1}}};
    slice.inputs = {x};
    slice.outputs = {band_tensor(x, steps[0].in.count())};
    slice.source = g.ops[size_t(stage[0])].source;
    int input = slice.outputs[0];
    band_ops.push_back(std::move(slice));
    for (size_t j = 0; j < stage.size(); ++j) {
      Op op = g.ops[size_t(stage[j])];
      const int64_t rows_out = j + 1 < stage.size() ? steps[j + 1].in.count() : rows.count();
      const std::vector<int64_t> pad = hw_attr(op, "padding", {0}), pad_end = hw_attr(op, "padding_end", pad);
      op.attrs["padding"] = std::vector<int64_t>{steps[j].pad_top, pad[1]};
      op.attrs["padding_end"] = std::vector<int64_t>{steps[j].pad_bottom, pad_end[1]};
      op.inputs[0] = input;
      op.outputs = {band_tensor(op.outputs[0], rows_out)};
      input = op.outputs[0];
      band_ops.push_back(std::move(op));
    }
    cat.inputs.push_back(input);
  }
  band_ops.push_back(std::move(cat));
  for (const Op& op : band_ops) {
    if (infer_shapes(g, op)[0] != g.tensors[size_t(op.outputs[0])].shape)
      throw CompileError("internal: patch band op " + op.where() + " has an unexpected shape");
  }
  // The bands take the place of the stage's first op: they read only the input and constants.
  std::vector<Op> ops;
  for (size_t i = 0; i < g.ops.size(); ++i) {
    if (int(i) == stage[0]) ops.insert(ops.end(), band_ops.begin(), band_ops.end());
    if (std::find(stage.begin(), stage.end(), int(i)) == stage.end()) ops.push_back(std::move(g.ops[i]));
  }
  g.ops = std::move(ops);
}

}  // namespace mcuflow::compiler
