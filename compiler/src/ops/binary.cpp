// Element-wise binary ops with NumPy broadcasting: add, sub, mul, minimum, maximum.
#include <algorithm>
#include <functional>

#include "families.h"
#include "lowering.h"

namespace mcuflow::compiler {
namespace {

Shape infer_binary(const Graph& g, const Op& op) {
  if (op.inputs.size() != 2) fail(op, "expects two inputs");
  if (op.has_attr("alpha") && op.float_attr("alpha") != 1.0) fail(op, "alpha != 1 is not supported");
  return broadcast_shapes(op, in_shape(g, op, 0), in_shape(g, op, 1));
}

constexpr uint32_t kBinary = kLayoutAgnostic | kFusesActivation;

struct BinaryLowering : Lowering {
  using Lowering::Lowering;

  void lower_binary(const Op& op) {
    const BinaryOperands o = binary_operands(op, op.kind != "sub");
    const Tensor& y = tensor(op.outputs[0]);
    const Tensor& a = tensor(o.a_ir);
    const Quant& bq = o.b_quant;
    const int aid = o.a, bid = o.b;
    k::BinaryParams p{};
    p.inner = o.inner;
    p.outer = o.outer;
    p.in2_mode = o.mode;
    fill_activation(p, op, y);
    const int out = activation(op.outputs[0]);
    if (is_quantized()) {
      p.input1_offset = -a.quant.zero_point;
      p.input2_offset = -bq.zero_point;
      p.output_offset = y.quant.zero_point;
      if (op.kind == "minimum" || op.kind == "maximum") {
        const QuantizedMultiplier m1 = quantize_multiplier(double(a.quant.scale) / y.quant.scale);
        const QuantizedMultiplier m2 = quantize_multiplier(double(bq.scale) / y.quant.scale);
        p.input1_multiplier = m1.multiplier;
        p.input1_shift = m1.shift;
        p.input2_multiplier = m2.multiplier;
        p.input2_shift = m2.shift;
      } else if (op.kind == "add" || op.kind == "sub") {
        const int left_shift = is_int16(op.outputs[0]) ? kAddLeftShiftS16 : kAddLeftShiftS8;
        set_add_rescale(p, add_rescale(a.quant.scale, bq.scale, y.quant.scale, left_shift));
      } else {
        const QuantizedMultiplier m = mul_rescale(a.quant.scale, bq.scale, y.quant.scale);
        p.output_multiplier = m.multiplier;
        p.output_shift = m.shift;
      }
    }
    emit(is_int16(op.outputs[0]) ? binary_kernel_s16(op) : binary_kernel(op.kind, is_quantized()), {aid, bid}, {out},
         params_bytes(p), &op);
  }

  static KernelId binary_kernel_s16(const Op& op) {
    if (op.kind == "add") return KernelId::add_s16;
    if (op.kind == "mul") return KernelId::mul_s16;
    fail(op, "internal: no int16 kernel");
  }

  static KernelId binary_kernel(const std::string& kind, bool int8) {
    if (kind == "add") return int8 ? KernelId::add_s8 : KernelId::add_f32;
    if (kind == "sub") return int8 ? KernelId::sub_s8 : KernelId::sub_f32;
    if (kind == "mul") return int8 ? KernelId::mul_s8 : KernelId::mul_f32;
    if (kind == "minimum") return int8 ? KernelId::minimum_s8 : KernelId::minimum_f32;
    return int8 ? KernelId::maximum_s8 : KernelId::maximum_f32;
  }
};

// add and mul of constants, broadcast as the kernels broadcast.
template <typename Combine>
std::vector<float> fold_binary(const Graph& g, const Op& op, const Shape& out_shape) {
  const Tensor& x = g.tensors[size_t(op.inputs[0])];
  const Tensor& y = g.tensors[size_t(op.inputs[1])];
  int64_t n = 1;
  for (int64_t d : out_shape) n *= d;
  std::vector<float> out(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i)
    out[size_t(i)] = Combine{}(x.data[size_t(broadcast_index(out_shape, x.shape, i))],
                               y.data[size_t(broadcast_index(out_shape, y.shape, i))]);
  return out;
}

}  // namespace

std::vector<OpDef> binary_ops() {
  // add_s16 and mul_s16: the int16 kernels.
  const auto binary = [](const char* kind, Int16Rule int16 = nullptr, FoldRule fold = nullptr) {
    return OpDef{kind,          infer_binary,         lower_with<BinaryLowering, &BinaryLowering::lower_binary>,
                 kBinary, OutputQuant::kObserved, RowLift::kElementwise,
                 ConstantQuant::kOperandRange, nullptr, int16, nullptr, fold};
  };
  return {binary("add", always_int16, fold_binary<std::plus<float>>), binary("sub"),
          binary("mul", always_int16, fold_binary<std::multiplies<float>>), binary("minimum"), binary("maximum")};
}

}  // namespace mcuflow::compiler
