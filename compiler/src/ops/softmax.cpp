// softmax along any dim (the kernel works on the last physical axis).
#include "families.h"
#include "lowering.h"

namespace mcuflow::compiler {
namespace {

Shape infer_softmax(const Graph& g, const Op& op) {
  const Shape& x = in_shape(g, op, 0);
  normalize_dim(op, op.int_attr("dim"), x.size());
  return x;
}

struct SoftmaxLowering : Lowering {
  using Lowering::Lowering;

  void lower_softmax(const Op& op) {
    const Tensor& x = tensor(op.inputs[0]);
    k::SoftmaxParams p{};
    const int dim = int(dim_of(op, x.shape.size()));
    p.depth = int32_t(x.shape[size_t(dim)]);
    p.rows = int32_t(x.numel() / p.depth);
    if (is_quantized()) {
      const SoftmaxRescale r = softmax_rescale(x.quant.scale);
      p.input_multiplier = r.input_multiplier;
      p.input_left_shift = r.input_left_shift;
      p.diff_min = r.diff_min;
    }
    // The kernel works on the last physical axis: the other dims keep x's physical order.
    std::vector<int> order;
    for (int d : physical_order(layout_of(x), x.shape.size())) {
      if (d != dim) order.push_back(d);
    }
    order.push_back(dim);
    const int in = reordered(op, op.inputs[0], order);
    const int out = scratch(op.outputs[0], dims_in_order(x.shape, order));
    emit(is_quantized() ? KernelId::softmax_s8 : KernelId::softmax_f32, {in}, {out}, params_bytes(p), &op);
    define_output(op, op.outputs[0], out, order);
  }

  std::string softmax_int8_rejection(const Op& op) const {
    const Shape& x = tensor(op.inputs[0]).shape;
    if (const int64_t depth = x[dim_of(op, x.size())]; depth > k::kSoftmaxMaxDepthS8)
      return "softmax over " + std::to_string(depth) + " values exceeds " + std::to_string(k::kSoftmaxMaxDepthS8) +
             " (the int8 kernel's 32-bit sum could wrap)";
    return "";
  }
};

}  // namespace

std::vector<OpDef> softmax_ops() {
  return {{"softmax", infer_softmax, lower_with<SoftmaxLowering, &SoftmaxLowering::lower_softmax>, 0,
           OutputQuant::kSoftmax, RowLift::kNo, ConstantQuant::kNone,
           int8_rejection_of<SoftmaxLowering, &SoftmaxLowering::softmax_int8_rejection>}};
}

}  // namespace mcuflow::compiler
