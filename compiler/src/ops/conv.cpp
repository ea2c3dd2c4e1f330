// conv2d (regular and depthwise) and conv_transpose2d.
#include "families.h"
#include "shape_helpers.h"

namespace mcuflow::compiler {
namespace {

void require_constant_parameters(const Graph& g, const Op& op) {
  if (!g.tensors[op.inputs[1]].constant) fail(op, "weights must be constant");
  if (op.inputs.size() > 2 && !g.tensors[op.inputs[2]].constant) fail(op, "bias must be constant");
}

Shape infer_conv2d(const Graph& g, const Op& op) {
  const Shape& x = in_shape(g, op, 0);
  const Shape& w = in_shape(g, op, 1);
  if (x.size() != 4 || w.size() != 4) fail(op, "expects a 4-D input and 4-D weight, got " + shape_str(x));
  require_constant_parameters(g, op);
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
  require_constant_parameters(g, op);
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

}  // namespace

std::vector<OpDef> conv_ops() {
  return {
      {"conv2d", infer_conv2d, kImageOp | kFusesActivation, OutputQuant::kObserved, RowLift::kNo,
       ConstantQuant::kWeightsPerChannel},
      {"conv_transpose2d", infer_conv_transpose2d, kImageOp | kFusesActivation, OutputQuant::kObserved, RowLift::kNo,
       ConstantQuant::kWeightsPerChannelDim1},
  };
}

}  // namespace mcuflow::compiler
