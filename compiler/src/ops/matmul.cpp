// Matrix products: linear (constant weights, any input rank) and matmul (two activations).
#include <algorithm>

#include "families.h"
#include "lowering.h"

namespace mcuflow::compiler {
namespace {

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

// fc_s8_w4 takes every linear layer.
std::string linear_int4_rejection(const Graph&, const Op&) { return ""; }

struct MatmulLowering : Lowering {
  using Lowering::Lowering;

  void lower_linear(const Op& op) {
    const Tensor& x = tensor(op.inputs[0]);
    const Tensor& w = tensor(op.inputs[1]);
    const Tensor& y = tensor(op.outputs[0]);
    const int32_t out_c = int32_t(w.shape[0]), in_c = int32_t(w.shape[1]);
    k::FcParams p{};
    p.rows = int32_t(x.numel() / in_c);
    p.in_c = in_c;
    p.out_c = out_c;
    p.per_channel = is_quantized() && w.quant.per_axis() ? 1 : 0;
    p.input_offset = is_quantized() ? -x.quant.zero_point : 0;
    fill_output_stage(p, op, y);
    // A 4-D input is NHWC on device; the product runs over the logical last dim.
    const bool image = layout_of(x) == Layout::kNhwc;
    const int in = image ? reordered(op, op.inputs[0], identity_order(x.shape.size())) : activation(op.inputs[0]);
    const int out = image ? scratch(op.outputs[0], logical_dims(y)) : activation(op.outputs[0]);
    const int64_t macs = int64_t(p.rows) * in_c * out_c;
    if (!is_quantized()) {
      const int wid = constant(w.name, DType::kFloat32, {out_c, in_c}, w.data);
      const int bid = constant(w.name + ".bias", DType::kFloat32, {out_c}, bias_of(op, out_c));
      emit(KernelId::fc_f32, {in, wid, bid}, {out}, params_bytes(p), &op, macs);
    } else {
      int bid, mid, sid;
      requant_tables(op, x, w, y, out_c, in_c, bid, mid, sid);
      const int wid = weight_constant(w, {out_c, in_c}, quantized(w));
      const KernelId kernel = is_int16(op.inputs[0]) ? KernelId::fc_s16 : int4_weights(w) ? KernelId::fc_s8_w4 : KernelId::fc_s8;
      emit(kernel, {in, wid, bid, mid, sid}, {out}, params_bytes(p), &op, macs);
      note_weights(op, w);
    }
    if (image) define_output(op, op.outputs[0], out, identity_order(y.shape.size()));
  }

  void lower_matmul(const Op& op) {
    const Tensor& a = tensor(op.inputs[0]);
    const Tensor& b = tensor(op.inputs[1]);
    const Tensor& y = tensor(op.outputs[0]);
    if (a.constant || b.constant) fail(op, "matmul with a constant operand is a linear layer");
    k::BatchMatmulParams p{};
    p.m = int32_t(a.shape[a.shape.size() - 2]);
    p.k = int32_t(a.shape.back());
    p.n = int32_t(b.shape.back());
    p.batch = int32_t(y.numel() / (int64_t(p.m) * p.n));
    if (is_quantized()) {
      p.lhs_offset = -a.quant.zero_point;
      p.rhs_offset = -b.quant.zero_point;
      p.output_offset = y.quant.zero_point;
      const QuantizedMultiplier m = mul_rescale(a.quant.scale, b.quant.scale, y.quant.scale);
      p.multiplier = m.multiplier;
      p.shift = m.shift;
    }
    fill_activation(p, op, y);
    const std::vector<int> order = identity_order(y.shape.size());
    const int lhs = reordered(op, op.inputs[0], order);
    const int rhs = reordered(op, op.inputs[1], order);
    const int out = scratch(op.outputs[0], logical_dims(y));
    emit(is_quantized() ? KernelId::batch_matmul_s8 : KernelId::batch_matmul_f32, {lhs, rhs}, {out}, params_bytes(p), &op,
         y.numel() * p.k);
    define_output(op, op.outputs[0], out, order);
  }

  std::string matmul_int8_rejection(const Op& op) const {
    if (tensor(op.inputs[0]).shape.back() > k::kBatchMatmulMaxDepthS8)
      return "matmul depth " + std::to_string(tensor(op.inputs[0]).shape.back()) + " exceeds " +
             std::to_string(k::kBatchMatmulMaxDepthS8) + " (the int32 accumulator could overflow)";
    return "";
  }
};

}  // namespace

std::vector<OpDef> matmul_ops() {
  return {
      {"linear", infer_linear, lower_with<MatmulLowering, &MatmulLowering::lower_linear>, kFusesActivation,
       OutputQuant::kObserved, RowLift::kNo, ConstantQuant::kWeightsPerTensor, nullptr, always_int16,
       linear_int4_rejection},
      {"matmul", infer_matmul, lower_with<MatmulLowering, &MatmulLowering::lower_matmul>, kFusesActivation,
       OutputQuant::kObserved, RowLift::kNo, ConstantQuant::kNone,
       int8_rejection_of<MatmulLowering, &MatmulLowering::matmul_int8_rejection>},
  };
}

}  // namespace mcuflow::compiler
