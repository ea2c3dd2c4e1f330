// softmax along any dim (the kernel works on the last physical axis).
#include <sstream>

#include "families.h"
#include "lowering.h"
#include "mcuflow/kernels/softmax_s16.h"

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
    if (is_int16(op.inputs[0])) {
      const k::SoftmaxS16Params q{p.rows, p.depth, 0, 0};
      const int tid = constant(tensor(op.outputs[0]).name + ".exp_table", DType::kInt16, {k::kLutS16Entries}, exp_table());
      emit(KernelId::softmax_s16, {in, tid}, {out}, params_bytes(with_diff_rescale(op, q, x.quant.scale)), &op);
    } else {
      emit(is_quantized() ? KernelId::softmax_s8 : KernelId::softmax_f32, {in}, {out}, params_bytes(p), &op);
    }
    define_output(op, op.outputs[0], out, order);
  }

  // softmax_s16's exp table (softmax_s16.h): exp over [-kSoftmaxS16ExpRange, 0] at 513 points, in
  // units of 1/32768, exp(0) stored as 32767.
  static std::vector<int16_t> exp_table() {
    std::vector<int16_t> table;
    for (int32_t i = 0; i < k::kLutS16Entries; ++i) {
      const double e = std::round(32768.0 * std::exp(-k::kSoftmaxS16ExpRange * i / (k::kLutS16Entries - 1)));
      table.push_back(int16_t(std::min(e, double(k::kSoftmaxS16OutputMax))));
    }
    return table;
  }

  // The multiplier and shift mapping a difference d of int16 inputs (scale `input_scale`) to the
  // exp table's input d * input_scale / kSoftmaxS16ExpRange * 65536, the multiplier in [2^14, 2^15).
  static k::SoftmaxS16Params with_diff_rescale(const Op& op, k::SoftmaxS16Params p, float input_scale) {
    int exponent = 0;
    const double mantissa = std::frexp(double(input_scale) * 65536.0 / k::kSoftmaxS16ExpRange, &exponent);
    p.diff_multiplier = int32_t(std::lround(std::ldexp(mantissa, 15)));
    p.diff_shift = 15 - exponent;
    if (p.diff_multiplier == 1 << 15) p.diff_multiplier >>= 1, p.diff_shift -= 1;
    if (p.diff_shift < 1 || p.diff_shift > 31) {
      std::ostringstream os;
      os << "the int16 softmax takes input scales from 1.4e-9 to 3 (the input's is " << input_scale << ")";
      fail(op, os.str());
    }
    return p;
  }

  std::string softmax_int8_rejection(const Op& op) const {
    const Shape& x = tensor(op.inputs[0]).shape;
    const int64_t depth = x[dim_of(op, x.size())];
    if (is_int16(op.inputs[0]))
      return depth > k::kSoftmaxS16MaxDepth ? "softmax over " + std::to_string(depth) + " values exceeds " +
                                                  std::to_string(k::kSoftmaxS16MaxDepth) + " (the int16 kernel's 32-bit sum could wrap)"
                                            : "";
    if (depth > k::kSoftmaxMaxDepthS8)
      return "softmax over " + std::to_string(depth) + " values exceeds " + std::to_string(k::kSoftmaxMaxDepthS8) +
             " (the int8 kernel's 32-bit sum could wrap)";
    return "";
  }
};

}  // namespace

std::vector<OpDef> softmax_ops() {
  return {{"softmax", infer_softmax, lower_with<SoftmaxLowering, &SoftmaxLowering::lower_softmax>, 0,
           OutputQuant::kSoftmax, RowLift::kNo, ConstantQuant::kNone,
           int8_rejection_of<SoftmaxLowering, &SoftmaxLowering::softmax_int8_rejection>, always_int16}};
}

}  // namespace mcuflow::compiler
