// Normalizations: batch_norm (folded into a convolution or lowered to mul + add by the graph
// passes), layer_norm and group_norm (GroupNorm, InstanceNorm).
#include "families.h"
#include "lowering.h"

namespace mcuflow::compiler {
namespace {

Shape infer_batch_norm(const Graph& g, const Op& op) {
  const Shape& x = in_shape(g, op, 0);
  if (op.inputs.size() != 5 || x.size() < 2) fail(op, "expects input, weight, bias, mean, var");
  for (size_t i = 1; i < 5; ++i) {
    const Tensor& t = g.tensors[op.inputs[i]];
    if (!t.constant || t.numel() != x[1]) fail(op, "statistics must be constants with one value per channel");
  }
  return x;
}

// The affine parameters (inputs 1 and 2) are constants of shape [channels]; `what` says which dim.
void require_affine(const Graph& g, const Op& op, int64_t channels, const std::string& what) {
  for (size_t i = 1; i < 3; ++i) {
    const Tensor& t = g.tensors[op.inputs[i]];
    if (!t.constant || t.shape != Shape{channels}) fail(op, what + "weight and bias must be constants of shape [" + std::to_string(channels) + "]");
  }
}

Shape infer_layer_norm(const Graph& g, const Op& op) {
  const Shape& x = in_shape(g, op, 0);
  if (op.inputs.size() != 3 || x.empty()) fail(op, "expects input, weight and bias");
  if (!(op.float_attr("eps") >= 0)) fail(op, "eps must not be negative");
  require_affine(g, op, x.back(), "normalizes the last dim only: ");
  return x;
}

Shape infer_group_norm(const Graph& g, const Op& op) {
  const Shape& x = in_shape(g, op, 0);
  if (op.inputs.size() != 3 || x.size() < 2) fail(op, "expects an input of rank >= 2 (N, C, ...), weight and bias");
  const int64_t groups = op.int_attr("groups");
  if (groups < 1 || x[1] % groups != 0)
    fail(op, std::to_string(x[1]) + " channels do not split into " + std::to_string(groups) + " groups");
  if (!(op.float_attr("eps") >= 0)) fail(op, "eps must not be negative");
  require_affine(g, op, x[1], "");
  return x;
}

struct NormLowering : Lowering {
  using Lowering::Lowering;

  // layer_norm and group_norm (GroupNorm, InstanceNorm) on one kernel: the normalized
  // values of each group, then a per-channel affine (GroupNormParams).
  struct NormLayout {
    std::vector<int> order;  // x's logical dims in the kernel's [outer][spatial][channels] order
    k::GroupNormParams params;
  };

  NormLayout norm_layout(const Op& op) const {
    const Tensor& x = tensor(op.inputs[0]);
    NormLayout l;
    l.params = k::GroupNormParams{};
    l.params.eps = float(op.float_attr("eps"));
    const int64_t numel = x.numel();
    if (op.kind == "layer_norm") {  // each row one group
      l.order = identity_order(x.shape.size());
      l.params.outer = int32_t(numel / x.shape.back());
      l.params.spatial = 1;
      l.params.groups = 1;
      l.params.group_size = int32_t(x.shape.back());
    } else {  // channels (dim 1) innermost, like NHWC
      l.order.push_back(0);
      for (size_t d = 2; d < x.shape.size(); ++d) l.order.push_back(int(d));
      l.order.push_back(1);
      const int64_t groups = op.int_attr("groups");
      l.params.outer = int32_t(x.shape[0]);
      l.params.spatial = int32_t(numel / (x.shape[0] * x.shape[1]));
      l.params.groups = int32_t(groups);
      l.params.group_size = int32_t(x.shape[1] / groups);
    }
    return l;
  }

  // The int8 constants of group_norm_s8, or the reason it cannot run in int8: kernel tables
  // (like a lookup table's), not a tensor's quantization spec. Channel c's weight is the
  // largest symmetric integer (or less, see below) with its magnitude in a per-channel scale,
  // so the affine keeps the float weight's precision; the bias is in units of unit * scale,
  // unit the value of normalized == 1. A scale is raised above |weight| / largest where the
  // bias would otherwise exceed the kernel's 2^30 bound.
  struct NormTables {
    std::vector<int8_t> weights;
    std::vector<int32_t> bias, multipliers, shifts;
    int64_t eps = 0;
    std::string problem;
  };

  NormTables norm_tables(const Op& op, const k::GroupNormParams& p) const {
    const Tensor& x = tensor(op.inputs[0]);
    const Tensor& y = tensor(op.outputs[0]);
    const std::vector<float>& w = tensor(op.inputs[1]).data;
    const std::vector<float>& b = tensor(op.inputs[2]).data;
    NormTables t;
    const int64_t count = int64_t(p.spatial) * p.group_size;
    if (count > k::kGroupNormMaxCount) {
      t.problem = "normalizes " + std::to_string(count) + " values together, more than the int8 kernel's " +
                  std::to_string(k::kGroupNormMaxCount);
      return t;
    }
    const double eps = std::round(std::ldexp(double(count) * double(count) * p.eps, k::kGroupNormVarianceBits) /
                                  (double(x.quant.scale) * x.quant.scale));
    if (!(eps <= double(k::kGroupNormMaxEps))) {
      t.problem = "eps is too large for the input's scale (eps / scale^2 exceeds the int8 kernel's range)";
      return t;
    }
    t.eps = int64_t(eps);
    const double unit = std::ldexp(1.0, -k::kGroupNormFractionBits);
    const double max_bias = double(k::kGroupNormMaxBias);
    Quant weight_type;  // group_norm_s8 reads symmetric int8 weights
    weight_type.bits = kWeightBits;
    weight_type.symmetric = true;
    const double largest = double(weight_type.q_max());
    for (size_t c = 0; c < w.size(); ++c) {
      double scale = std::max(std::fabs(double(w[c])) / largest, std::fabs(double(b[c])) / (unit * max_bias) * (1 + 1e-9));
      if (scale == 0.0) scale = 1.0;
      t.weights.push_back(int8_t(std::clamp(std::round(w[c] / scale), -largest, largest)));
      t.bias.push_back(int32_t(std::clamp(std::round(b[c] / (unit * scale)), -max_bias, max_bias)));
      const QuantizedMultiplier m = quantize_multiplier(unit * scale / y.quant.scale);
      if (m.shift > 0) {
        t.problem = "the output scale is too fine for weight " + std::to_string(w[c]) + " (a multiplier above 1)";
        return t;
      }
      t.multipliers.push_back(m.multiplier);
      t.shifts.push_back(m.shift);
    }
    return t;
  }

  void lower_norm(const Op& op) {
    const Tensor& y = tensor(op.outputs[0]);
    const Tensor& w = tensor(op.inputs[1]);
    const Tensor& b = tensor(op.inputs[2]);
    NormLayout l = norm_layout(op);
    const int32_t channels = l.params.groups * l.params.group_size;
    const int in = reordered(op, op.inputs[0], l.order);
    const int out = scratch(op.outputs[0], dims_in_order(y.shape, l.order));
    if (!is_quantized()) {
      const int wid = constant(w.name, DType::kFloat32, {channels}, w.data);
      const int bid = constant(b.name, DType::kFloat32, {channels}, b.data);
      emit(KernelId::group_norm_f32, {in, wid, bid}, {out}, params_bytes(l.params), &op);
    } else {
      const NormTables t = norm_tables(op, l.params);
      l.params.eps_lo = int32_t(uint32_t(uint64_t(t.eps)));
      l.params.eps_hi = int32_t(uint32_t(uint64_t(t.eps) >> 32));
      l.params.output_offset = y.quant.zero_point;
      l.params.act_min = int32_t(y.quant.type_min());
      l.params.act_max = int32_t(y.quant.type_max());
      const int wid = constant(w.name, DType::kInt8, {channels}, t.weights);
      const int bid = constant(b.name, DType::kInt32, {channels}, t.bias);
      const int mid = constant(w.name + ".multipliers", DType::kInt32, {channels}, t.multipliers);
      const int sid = constant(w.name + ".shifts", DType::kInt32, {channels}, t.shifts);
      emit(KernelId::group_norm_s8, {in, wid, bid, mid, sid}, {out}, params_bytes(l.params), &op);
    }
    define_output(op, op.outputs[0], out, l.order);
  }

  std::string norm_int8_rejection(const Op& op) const { return norm_tables(op, norm_layout(op).params).problem; }
};

}  // namespace

std::vector<OpDef> norm_ops() {
  const LowerRule lower_norm = lower_with<NormLowering, &NormLowering::lower_norm>;
  const Int8Rejection norm_int8_rejection = int8_rejection_of<NormLowering, &NormLowering::norm_int8_rejection>;
  return {
      // No lowering: fold_batch_norm folds it into its convolution, lower_batch_norm turns the rest
      // into a per-channel mul and add.
      {"batch_norm", infer_batch_norm, nullptr, kLayoutAgnostic, OutputQuant::kObserved, RowLift::kPerChannel},
      {"layer_norm", infer_layer_norm, lower_norm, 0, OutputQuant::kObserved, RowLift::kNo, ConstantQuant::kNone,
       norm_int8_rejection},
      {"group_norm", infer_group_norm, lower_norm, kImageOp, OutputQuant::kObserved, RowLift::kNo, ConstantQuant::kNone,
       norm_int8_rejection},
  };
}

}  // namespace mcuflow::compiler
