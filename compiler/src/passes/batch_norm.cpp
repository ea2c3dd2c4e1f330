#include <cmath>

#include "mcuflow/compiler/passes.h"

namespace mcuflow::compiler {
namespace {

struct BatchNormAffine {  // batch_norm(x) = scale[c] * x + shift[c]
  std::vector<float> scale, shift;
};

BatchNormAffine affine_of(const Graph& g, const Op& bn) {
  const auto& w = g.tensors[bn.inputs[1]].data;
  const auto& b = g.tensors[bn.inputs[2]].data;
  const auto& mean = g.tensors[bn.inputs[3]].data;
  const auto& var = g.tensors[bn.inputs[4]].data;
  const double eps = bn.float_attr("eps");
  BatchNormAffine a;
  for (size_t c = 0; c < w.size(); ++c) {
    const double s = w[c] / std::sqrt(double(var[c]) + eps);
    a.scale.push_back(float(s));
    a.shift.push_back(float(b[c] - mean[c] * s));
  }
  return a;
}

}  // namespace

void fold_batch_norm(Graph& g) {
  std::vector<bool> removed(g.ops.size(), false);
  for (size_t i = 0; i < g.ops.size(); ++i) {
    Op& conv = g.ops[i];  // a conv2d, or a linear whose rank-2 output has channels last
    const bool linear_2d = conv.kind == "linear" && g.tensors[conv.outputs[0]].shape.size() == 2;
    if (conv.kind != "conv2d" && !linear_2d) continue;
    const int y = conv.outputs[0];
    const auto users = g.consumers(y);
    if (users.size() != 1 || g.is_graph_output(y) || g.ops[users[0]].kind != "batch_norm") continue;
    Op& bn = g.ops[users[0]];
    const BatchNormAffine a = affine_of(g, bn);

    // New constants: the originals may be shared with other ops.
    const Tensor& w = g.tensors[conv.inputs[1]];
    std::vector<float> weights = w.data;
    const size_t per_channel = weights.size() / a.scale.size();
    for (size_t c = 0; c < a.scale.size(); ++c) {
      for (size_t k = 0; k < per_channel; ++k) weights[c * per_channel + k] *= a.scale[c];
    }
    std::vector<float> bias(a.scale.size(), 0.0f);
    if (conv.inputs.size() > 2) bias = g.tensors[conv.inputs[2]].data;
    for (size_t c = 0; c < bias.size(); ++c) bias[c] = bias[c] * a.scale[c] + a.shift[c];

    const Shape w_shape = w.shape;
    const std::string name = w.name;
    conv.inputs[1] = g.add_constant(name + ".bn_folded", w_shape, std::move(weights));
    const Shape b_shape{int64_t(bias.size())};  // before the move: argument order is unspecified
    const int b = g.add_constant(name + ".bn_folded_bias", b_shape, std::move(bias));
    if (conv.inputs.size() > 2) conv.inputs[2] = b; else conv.inputs.push_back(b);
    g.replace_uses(bn.outputs[0], y);
    removed[users[0]] = true;
  }
  erase_ops(g, removed);
}

void lower_batch_norm(Graph& g) {
  std::vector<Op> ops;
  for (Op& op : g.ops) {
    if (op.kind != "batch_norm") {
      ops.push_back(std::move(op));
      continue;
    }
    const BatchNormAffine a = affine_of(g, op);
    const Tensor& x = g.tensors[op.inputs[0]];
    Shape channel_shape(x.shape.size(), 1);
    channel_shape[1] = x.shape[1];
    const int scale = g.add_constant(op.source + ".bn_scale", channel_shape, a.scale);
    const int shift = g.add_constant(op.source + ".bn_shift", channel_shape, a.shift);
    Tensor scaled = g.tensors[op.outputs[0]];
    scaled.name += ".scaled";
    const int scaled_id = g.add_tensor(scaled);
    Op mul{"mul", {op.inputs[0], scale}, {scaled_id}, {}, op.source};
    Op add{"add", {scaled_id, shift}, op.outputs, {}, op.source};
    ops.push_back(std::move(mul));
    ops.push_back(std::move(add));
  }
  g.ops = std::move(ops);
}

}  // namespace mcuflow::compiler
