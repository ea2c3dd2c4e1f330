// Shape inference for the front-end vocabulary. Every attribute the kernels cannot honour is
// rejected here with a message naming the op and its source line.
#include <algorithm>
#include <functional>
#include <map>

#include "mcuflow/compiler/ir.h"
#include "mcuflow/runtime/format.h"

namespace mcuflow::compiler {
namespace {

[[noreturn]] void fail(const Op& op, const std::string& why) { throw CompileError(op.where() + ": " + why); }

// Activations a program can hold: at most format::kMaxRank dims of at most format::kMaxDim.
void require_representable(const Op& op, const std::string& what, const Shape& s) {
  if (s.size() > format::kMaxRank)
    fail(op, what + " " + shape_str(s) + " has " + std::to_string(s.size()) + " dims; at most " +
                 std::to_string(format::kMaxRank) + " are supported");
  for (int64_t d : s) {
    if (d > format::kMaxDim)
      fail(op, what + " " + shape_str(s) + " has a dim larger than " + std::to_string(format::kMaxDim));
  }
}

const Shape& in_shape(const Graph& g, const Op& op, size_t i) {
  if (i >= op.inputs.size()) fail(op, "expects at least " + std::to_string(i + 1) + " inputs");
  return g.tensors.at(op.inputs[i]).shape;
}

int64_t normalize_dim(const Op& op, int64_t dim, size_t rank) {
  const int64_t r = static_cast<int64_t>(rank);
  if (dim < -r || dim >= r) fail(op, "dim " + std::to_string(dim) + " out of range for rank " + std::to_string(rank));
  return dim < 0 ? dim + r : dim;
}

std::vector<int64_t> pair_attr(const Op& op, const std::string& name) {
  std::vector<int64_t> v = op.ints_attr(name);
  if (v.size() == 1) v.push_back(v[0]);
  if (v.size() != 2) fail(op, "'" + name + "' must have 2 values");
  return v;
}

int64_t window_out(int64_t in, int64_t k, int64_t stride, int64_t pad, int64_t pad_end, int64_t dil, bool ceil_mode) {
  const int64_t span = in + pad + pad_end - dil * (k - 1) - 1;
  int64_t out = (ceil_mode ? (span + stride - 1) / stride : span / stride) + 1;
  // PyTorch: with ceil_mode the last window must start inside the input or left padding.
  if (ceil_mode && (out - 1) * stride >= in + pad) --out;
  return out;
}

// Bottom/right padding: "padding_end" when a folded pad made it differ from "padding".
std::vector<int64_t> end_padding(const Op& op, const std::vector<int64_t>& pad) {
  if (!op.has_attr("padding_end")) return pad;
  std::vector<int64_t> end = pair_attr(op, "padding_end");
  if (end[0] < 0 || end[1] < 0) fail(op, "padding must be >= 0");
  return end;
}

Shape infer_conv2d(const Graph& g, const Op& op) {
  const Shape& x = in_shape(g, op, 0);
  const Shape& w = in_shape(g, op, 1);
  if (x.size() != 4 || w.size() != 4) fail(op, "expects a 4-D input and 4-D weight, got " + shape_str(x));
  if (!g.tensors[op.inputs[1]].constant) fail(op, "weights must be constant");
  if (op.inputs.size() > 2 && !g.tensors[op.inputs[2]].constant) fail(op, "bias must be constant");
  auto stride = pair_attr(op, "stride"), pad = pair_attr(op, "padding"), dil = pair_attr(op, "dilation");
  const int64_t groups = op.int_attr("groups");
  if (groups < 1 || x[1] % groups != 0 || w[1] * groups != x[1] || w[0] % groups != 0)
    fail(op, "weight " + shape_str(w) + " and groups=" + std::to_string(groups) + " do not match input " + shape_str(x));
  if (groups != 1 && groups != x[1])
    fail(op, "grouped convolution with groups=" + std::to_string(groups) + " is not supported (groups must be 1 or the channel count)");
  for (int i = 0; i < 2; ++i) {
    if (stride[i] < 1 || dil[i] < 1 || pad[i] < 0) fail(op, "stride/dilation must be >= 1 and padding >= 0");
  }
  const auto pad_end = end_padding(op, pad);
  const int64_t oh = window_out(x[2], w[2], stride[0], pad[0], pad_end[0], dil[0], false);
  const int64_t ow = window_out(x[3], w[3], stride[1], pad[1], pad_end[1], dil[1], false);
  if (oh < 1 || ow < 1) fail(op, "kernel larger than the padded input");
  return {x[0], w[0], oh, ow};
}

Shape infer_conv_transpose2d(const Graph& g, const Op& op) {
  const Shape& x = in_shape(g, op, 0);
  const Shape& w = in_shape(g, op, 1);
  if (x.size() != 4 || w.size() != 4) fail(op, "expects a 4-D input and 4-D weight, got " + shape_str(x));
  if (!g.tensors[op.inputs[1]].constant) fail(op, "weights must be constant");
  if (op.inputs.size() > 2 && !g.tensors[op.inputs[2]].constant) fail(op, "bias must be constant");
  if (op.int_attr("groups") != 1) fail(op, "grouped transposed convolution is not supported (groups must be 1)");
  if (w[0] != x[1]) fail(op, "weight " + shape_str(w) + " does not match input " + shape_str(x));
  auto stride = pair_attr(op, "stride"), pad = pair_attr(op, "padding"), dil = pair_attr(op, "dilation");
  auto extra = pair_attr(op, "output_padding");
  Shape out = {x[0], w[1], 0, 0};
  for (int i = 0; i < 2; ++i) {
    if (stride[i] < 1 || dil[i] < 1 || pad[i] < 0 || extra[i] < 0) fail(op, "stride/dilation must be >= 1 and padding >= 0");
    if (extra[i] >= stride[i] && extra[i] >= dil[i]) fail(op, "output_padding must be smaller than stride or dilation");
    out[2 + i] = (x[2 + i] - 1) * stride[i] - 2 * pad[i] + dil[i] * (w[2 + i] - 1) + extra[i] + 1;
    if (out[2 + i] < 1) fail(op, "padding larger than the output");
  }
  return out;
}

Shape infer_linear(const Graph& g, const Op& op) {
  const Shape& x = in_shape(g, op, 0);
  const Shape& w = in_shape(g, op, 1);
  if (!g.tensors[op.inputs[1]].constant) fail(op, "weights must be constant (two activation inputs need matmul)");
  if (w.size() != 2 || x.empty() || x.back() != w[1])
    fail(op, "input " + shape_str(x) + " does not match weight " + shape_str(w));
  Shape out = x;
  out.back() = w[0];
  return out;
}

Shape broadcast(const Op& op, Shape a, Shape b) {
  const size_t r = std::max(a.size(), b.size());
  a.insert(a.begin(), r - a.size(), 1);
  b.insert(b.begin(), r - b.size(), 1);
  Shape out(r);
  for (size_t i = 0; i < r; ++i) {
    if (a[i] != b[i] && a[i] != 1 && b[i] != 1) fail(op, "shapes " + shape_str(a) + " and " + shape_str(b) + " do not broadcast");
    out[i] = std::max(a[i], b[i]);
  }
  return out;
}

Shape infer_pool(const Graph& g, const Op& op, bool is_avg) {
  const Shape& x = in_shape(g, op, 0);
  if (x.size() != 4) fail(op, "expects a 4-D input, got " + shape_str(x));
  auto k = pair_attr(op, "kernel");
  std::vector<int64_t> stride = op.ints_attr("stride");
  if (stride.empty()) stride = k;  // PyTorch: stride defaults to the kernel size
  if (stride.size() == 1) stride.push_back(stride[0]);
  auto pad = pair_attr(op, "padding");
  std::vector<int64_t> dil = {1, 1};
  if (op.has_attr("dilation")) dil = pair_attr(op, "dilation");
  if (dil[0] != 1 || dil[1] != 1) fail(op, "dilated pooling is not supported");
  const bool ceil_mode = op.has_attr("ceil_mode") && op.int_attr("ceil_mode") != 0;
  const auto pad_end = end_padding(op, pad);
  // Folded pads (padding_end present) may exceed PyTorch's half-kernel limit: they are data.
  const bool folded = op.has_attr("padding_end");
  for (int i = 0; i < 2; ++i) {
    if (k[i] < 1 || stride[i] < 1 || pad[i] < 0 || (!folded && 2 * pad[i] > k[i])) fail(op, "invalid kernel/stride/padding");
  }
  if (is_avg && op.has_attr("divisor_override")) fail(op, "divisor_override is not supported");
  const int64_t oh = window_out(x[2], k[0], stride[0], pad[0], pad_end[0], 1, ceil_mode);
  const int64_t ow = window_out(x[3], k[1], stride[1], pad[1], pad_end[1], 1, ceil_mode);
  if (is_avg && ceil_mode && (oh != window_out(x[2], k[0], stride[0], pad[0], pad_end[0], 1, false) ||
                              ow != window_out(x[3], k[1], stride[1], pad[1], pad_end[1], 1, false)))
    fail(op, "avg_pool2d with ceil_mode=True that adds partial windows is not supported");
  if (oh < 1 || ow < 1) fail(op, "kernel larger than the padded input");
  return {x[0], x[1], oh, ow};
}

Shape infer_reshape(const Graph& g, const Op& op) {
  const Shape& x = in_shape(g, op, 0);
  Shape out = op.ints_attr("shape");
  int64_t known = 1, infer_at = -1;
  for (size_t i = 0; i < out.size(); ++i) {
    if (out[i] == -1) {
      if (infer_at >= 0) fail(op, "more than one -1 in shape");
      infer_at = static_cast<int64_t>(i);
    } else {
      if (out[i] < 0) fail(op, "negative size in shape");
      known *= out[i];
    }
  }
  int64_t n = 1;
  for (int64_t d : x) n *= d;
  if (infer_at >= 0 && known > 0) out[infer_at] = n / known;
  int64_t m = 1;
  for (int64_t d : out) m *= d;
  if (m != n) fail(op, "cannot reshape " + shape_str(x) + " into " + shape_str(out));
  return out;
}

Shape infer_permute(const Graph& g, const Op& op) {
  const Shape& x = in_shape(g, op, 0);
  const auto& perm = op.ints_attr("perm");
  if (perm.size() != x.size()) fail(op, "perm length does not match rank");
  Shape out(x.size());
  std::vector<bool> seen(x.size(), false);
  for (size_t i = 0; i < perm.size(); ++i) {
    const int64_t p = normalize_dim(op, perm[i], x.size());
    if (seen[p]) fail(op, "perm is not a permutation");
    seen[p] = true;
    out[i] = x[p];
  }
  return out;
}

// mean / sum / amax over "dims" (all dims when empty), keepdim or not.
Shape infer_reduce(const Graph& g, const Op& op) {
  const Shape& x = in_shape(g, op, 0);
  std::vector<bool> reduced(x.size(), op.ints_attr("dims").empty());
  for (int64_t d : op.ints_attr("dims")) reduced[normalize_dim(op, d, x.size())] = true;
  const bool keep = op.int_attr("keepdim") != 0;
  Shape out;
  for (size_t d = 0; d < x.size(); ++d) {
    if (!reduced[d]) out.push_back(x[d]);
    else if (keep) out.push_back(1);
  }
  return out;
}

Shape infer_argmax(const Graph& g, const Op& op) {
  Shape out = in_shape(g, op, 0);
  const int64_t dim = normalize_dim(op, op.int_attr("dim"), out.size());
  if (op.int_attr("keepdim") != 0) out[dim] = 1;
  else out.erase(out.begin() + dim);
  return out;
}

Shape infer_adaptive_avg_pool(const Graph& g, const Op& op) {
  const Shape& x = in_shape(g, op, 0);
  auto size = pair_attr(op, "output_size");
  if (x.size() != 4) fail(op, "expects a 4-D input");
  if (size[0] < 1 || size[1] < 1 || x[2] % size[0] != 0 || x[3] % size[1] != 0)
    fail(op, "output size " + shape_str(size) + " must divide the input size " + shape_str(x));
  return {x[0], x[1], size[0], size[1]};
}

Shape infer_softmax(const Graph& g, const Op& op) {
  const Shape& x = in_shape(g, op, 0);
  normalize_dim(op, op.int_attr("dim"), x.size());
  return x;
}

Shape infer_cat(const Graph& g, const Op& op) {
  if (op.inputs.empty()) fail(op, "needs at least one input");
  Shape out = in_shape(g, op, 0);
  const int64_t dim = normalize_dim(op, op.int_attr("dim"), out.size());
  for (size_t i = 1; i < op.inputs.size(); ++i) {
    const Shape& s = in_shape(g, op, i);
    if (s.size() != out.size()) fail(op, "inputs have different ranks");
    for (size_t d = 0; d < s.size(); ++d) {
      if (static_cast<int64_t>(d) != dim && s[d] != out[d]) fail(op, "input shapes differ outside the cat dim");
    }
    out[dim] += s[dim];
  }
  return out;
}

Shape infer_batch_norm(const Graph& g, const Op& op) {
  const Shape& x = in_shape(g, op, 0);
  if (op.inputs.size() != 5 || x.size() < 2) fail(op, "expects input, weight, bias, mean, var");
  for (size_t i = 1; i < 5; ++i) {
    const Tensor& t = g.tensors[op.inputs[i]];
    if (!t.constant || t.numel() != x[1]) fail(op, "statistics must be constants with one value per channel");
  }
  return x;
}

Shape same_as_input(const Graph& g, const Op& op) { return in_shape(g, op, 0); }

// "pad": PyTorch F.pad order, (before, after) pairs starting from the last dim; negative
// values crop.
Shape infer_pad(const Graph& g, const Op& op) {
  Shape out = in_shape(g, op, 0);
  const auto& pad = op.ints_attr("pad");
  if (pad.size() % 2 != 0 || pad.size() > 2 * out.size()) fail(op, "pad must hold (before, after) pairs for at most every dim");
  for (size_t i = 0; i < pad.size() / 2; ++i) {
    int64_t& d = out[out.size() - 1 - i];
    d += pad[2 * i] + pad[2 * i + 1];
    if (d < 1) fail(op, "padding leaves an empty dimension");
  }
  return out;
}

Shape infer_slice(const Graph& g, const Op& op) {
  Shape out = in_shape(g, op, 0);
  const int64_t dim = normalize_dim(op, op.int_attr("dim"), out.size());
  const int64_t start = op.int_attr("start"), end = op.int_attr("end"), step = op.int_attr("step");
  if (step < 1) fail(op, "slice step must be >= 1");
  if (start < 0 || end > out[dim] || start >= end) fail(op, "slice [" + std::to_string(start) + ", " + std::to_string(end) + ") is empty or outside dim " + std::to_string(dim) + " of " + shape_str(out));
  out[dim] = (end - start + step - 1) / step;
  return out;
}

Shape infer_expand(const Graph& g, const Op& op) {
  const Shape& x = in_shape(g, op, 0);
  Shape out = op.ints_attr("shape");
  if (out.size() < x.size()) fail(op, "cannot expand " + shape_str(x) + " to fewer dims");
  const size_t lead = out.size() - x.size();
  for (size_t d = 0; d < out.size(); ++d) {
    const int64_t have = d < lead ? 1 : x[d - lead];
    if (out[d] == -1 && d >= lead) out[d] = have;
    if (out[d] < 1 || (have != 1 && have != out[d])) fail(op, "cannot expand " + shape_str(x) + " to " + shape_str(op.ints_attr("shape")));
  }
  return out;
}

Shape infer_upsample(const Graph& g, const Op& op) {
  Shape out = in_shape(g, op, 0);
  if (out.size() != 4) fail(op, "expects a 4-D input");
  const auto scale = pair_attr(op, "scale");
  if (scale[0] < 1 || scale[1] < 1) fail(op, "scale factors must be positive integers");
  out[2] *= scale[0];
  out[3] *= scale[1];
  return out;
}

Shape infer_upsample_bilinear(const Graph& g, const Op& op) {
  Shape out = in_shape(g, op, 0);
  if (out.size() != 4) fail(op, "expects a 4-D input");
  const auto size = pair_attr(op, "size");
  if (size[0] < 1 || size[1] < 1) fail(op, "output size must be positive");
  if (!(op.float_attr("scale_h") >= 0.0 && op.float_attr("scale_w") >= 0.0)) fail(op, "scale factors must be positive");
  out[2] = size[0];
  out[3] = size[1];
  return out;
}

Shape infer_matmul(const Graph& g, const Op& op) {
  const Shape& a = in_shape(g, op, 0);
  const Shape& b = in_shape(g, op, 1);
  if (a.size() < 2 || b.size() != a.size()) fail(op, "expects two operands of the same rank >= 2, got " + shape_str(a) + " and " + shape_str(b));
  if (!std::equal(a.begin(), a.end() - 2, b.begin()) || a.back() != b[b.size() - 2])
    fail(op, "shapes " + shape_str(a) + " and " + shape_str(b) + " do not multiply (batch dims must be equal)");
  Shape out = a;
  out.back() = b.back();
  return out;
}

Shape infer_layer_norm(const Graph& g, const Op& op) {
  const Shape& x = in_shape(g, op, 0);
  if (op.inputs.size() != 3 || x.empty()) fail(op, "expects input, weight and bias");
  if (!(op.float_attr("eps") >= 0)) fail(op, "eps must not be negative");
  for (size_t i = 1; i < 3; ++i) {
    const Tensor& t = g.tensors[op.inputs[i]];
    if (!t.constant || t.shape != Shape{x.back()}) fail(op, "normalizes the last dim only: weight and bias must be constants of shape [" + std::to_string(x.back()) + "]");
  }
  return x;
}

Shape infer_group_norm(const Graph& g, const Op& op) {
  const Shape& x = in_shape(g, op, 0);
  if (op.inputs.size() != 3 || x.size() < 2) fail(op, "expects an input of rank >= 2 (N, C, ...), weight and bias");
  const int64_t groups = op.int_attr("groups");
  if (groups < 1 || x[1] % groups != 0)
    fail(op, std::to_string(x[1]) + " channels do not split into " + std::to_string(groups) + " groups");
  if (!(op.float_attr("eps") >= 0)) fail(op, "eps must not be negative");
  for (size_t i = 1; i < 3; ++i) {
    const Tensor& t = g.tensors[op.inputs[i]];
    if (!t.constant || t.shape != Shape{x[1]}) fail(op, "weight and bias must be constants of shape [" + std::to_string(x[1]) + "]");
  }
  return x;
}

Shape infer_binary(const Graph& g, const Op& op) {  // add, sub, mul, minimum, maximum
  if (op.inputs.size() != 2) fail(op, "expects two inputs");
  if (op.has_attr("alpha") && op.float_attr("alpha") != 1.0) fail(op, "alpha != 1 is not supported");
  return broadcast(op, in_shape(g, op, 0), in_shape(g, op, 1));
}

Shape infer_prelu(const Graph& g, const Op& op) {  // x, weight: one slope, or one per channel (dim 1)
  const Shape& x = in_shape(g, op, 0);
  const Tensor& w = g.tensors[op.inputs.at(1)];
  const int64_t channels = x.size() >= 2 ? x[1] : 1;
  if (op.inputs.size() != 2 || !w.constant || (w.numel() != 1 && w.numel() != channels))
    fail(op, "expects a constant weight of 1 or " + std::to_string(channels) + " slopes");
  return x;
}

Shape infer_clamp(const Graph& g, const Op& op) {
  if (!(op.float_attr("min") <= op.float_attr("max"))) fail(op, "min must not exceed max");
  return in_shape(g, op, 0);
}

const std::map<std::string, std::function<Shape(const Graph&, const Op&)>>& rules() {
  static const std::map<std::string, std::function<Shape(const Graph&, const Op&)>> kRules = {
      {"conv2d", infer_conv2d},
      {"linear", infer_linear},
      {"batch_norm", infer_batch_norm},
      {"relu", same_as_input},
      {"clamp", infer_clamp},
      {"add", infer_binary},
      {"mul", infer_binary},
      {"max_pool2d", [](const Graph& g, const Op& op) { return infer_pool(g, op, false); }},
      {"avg_pool2d", [](const Graph& g, const Op& op) { return infer_pool(g, op, true); }},
      {"mean", infer_reduce},
      {"adaptive_avg_pool2d", infer_adaptive_avg_pool},
      {"reshape", infer_reshape},
      {"permute", infer_permute},
      {"softmax", infer_softmax},
      {"cat", infer_cat},
      {"identity", same_as_input},
      {"pad", infer_pad},
      {"sigmoid", same_as_input},
      {"tanh", same_as_input},
      {"hardswish", same_as_input},
      {"hardsigmoid", same_as_input},
      {"silu", same_as_input},
      {"gelu", same_as_input},
      {"elu", same_as_input},
      {"leaky_relu", same_as_input},
      {"prelu", infer_prelu},
      {"mish", same_as_input},
      {"neg", same_as_input},
      {"abs", same_as_input},
      {"sub", infer_binary},
      {"minimum", infer_binary},
      {"maximum", infer_binary},
      {"sum", infer_reduce},
      {"amax", infer_reduce},
      {"argmax", infer_argmax},
      {"slice", infer_slice},
      {"input_rows", infer_slice},  // split_into_patches: a band of a streamed input, as a slice
      {"expand", infer_expand},
      {"conv_transpose2d", infer_conv_transpose2d},
      {"matmul", infer_matmul},
      {"upsample_nearest2d", infer_upsample},
      {"upsample_bilinear2d", infer_upsample_bilinear},
      {"layer_norm", infer_layer_norm},
      {"group_norm", infer_group_norm},
  };
  return kRules;
}

}  // namespace

std::vector<Shape> infer_shapes(const Graph& g, const Op& op) {
  auto it = rules().find(op.kind);
  if (it == rules().end()) {
    std::string supported;
    for (const auto& [name, rule] : rules()) supported += (supported.empty() ? "" : ", ") + name;
    fail(op, "unsupported op; supported: " + supported);
  }
  for (int input : op.inputs) {
    if (input < 0 || input >= static_cast<int>(g.tensors.size())) fail(op, "input tensor id out of range");
    const Tensor& t = g.tensors[size_t(input)];
    if (!t.constant) require_representable(op, "input " + t.name, t.shape);
  }
  const Shape out = it->second(g, op);
  require_representable(op, "output", out);
  return {out};
}

}  // namespace mcuflow::compiler
