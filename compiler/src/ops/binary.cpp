// Element-wise binary ops with NumPy broadcasting: add, sub, mul, minimum, maximum.
#include <algorithm>

#include "families.h"
#include "lowering.h"

namespace mcuflow::compiler {
namespace {

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

Shape infer_binary(const Graph& g, const Op& op) {
  if (op.inputs.size() != 2) fail(op, "expects two inputs");
  if (op.has_attr("alpha") && op.float_attr("alpha") != 1.0) fail(op, "alpha != 1 is not supported");
  return broadcast(op, in_shape(g, op, 0), in_shape(g, op, 1));
}

constexpr uint32_t kBinary = kLayoutAgnostic | kFusesActivation;

struct BinaryLowering : Lowering {
  using Lowering::Lowering;

  // Which elements of `b` (broadcast against output `y`) the kernel sees: 0 same shape,
  // 1 one value per physical innermost element (channel), 2 a single value; -1 unsupported.
  static int broadcast_mode(const Tensor& b, const Tensor& y) {
    if (b.numel() == y.numel() && (b.shape == y.shape)) return 0;
    if (b.numel() == 1) return 1 + 1;
    Shape bs = b.shape;
    bs.insert(bs.begin(), y.shape.size() - std::min(bs.size(), y.shape.size()), 1);
    if (bs.size() != y.shape.size()) return -1;
    const int inner_dim = y.nhwc && y.shape.size() == 4 ? 1 : int(y.shape.size()) - 1;
    for (size_t d = 0; d < bs.size(); ++d) {
      if (int(d) != inner_dim && bs[d] != 1) return -1;
    }
    return bs[inner_dim] == y.shape[inner_dim] ? 1 : -1;
  }

  void lower_binary(const Op& op) {
    int a_id = op.inputs[0], b_id = op.inputs[1];
    const Tensor& y = tensor(op.outputs[0]);
    // The kernels read their first operand as an activation and broadcast their second per
    // channel or as a scalar; other broadcasts are copies. All ops but sub are commutative: a
    // constant goes second, and of two activations the one of the output's shape goes first.
    if (op.kind != "sub") {
      const Tensor &first = tensor(a_id), &second = tensor(b_id);
      if (first.constant || (!second.constant && first.shape != y.shape && second.shape == y.shape))
        std::swap(a_id, b_id);
    }
    const Tensor& a = tensor(a_id);
    const Tensor& b = tensor(b_id);
    if (a.constant && op.kind == "sub")
      fail(op, "constant first operand of a subtraction (the front end sends c - x as neg and add)");
    if (a.constant) fail(op, "both operands are constants (constant folding computes such ops)");
    int mode = broadcast_mode(b, y);
    // A constant the kernel cannot broadcast is expanded now, to the output's shape.
    std::vector<float> b_data = b.data;
    if (mode < 0 && b.constant) {
      b_data.resize(size_t(y.numel()));
      for (int64_t i = 0; i < y.numel(); ++i) b_data[size_t(i)] = b.data[size_t(broadcast_index(y.shape, b.shape, i))];
      mode = 0;
    }
    // Operands in another shape or layout than the output are copied into it.
    auto matches = [&](const Tensor& t) { return t.shape == y.shape && layout_of(t) == layout_of(y); };
    const int aid = matches(a) ? activation(a_id) : broadcast_to(op, a_id, y);
    int bid = -1;
    if (mode < 0 || (mode == 0 && !b.constant && !matches(b))) {
      bid = broadcast_to(op, b_id, y);
      mode = 0;
    }

    k::BinaryParams p{};
    const std::vector<int32_t> y_dims = physical_dims(y);
    p.inner = mode == 1 ? y_dims.back() : int32_t(y.numel());
    p.outer = int32_t(y.numel() / p.inner);
    p.in2_mode = mode;
    fill_activation(p, op, y);

    Quant bq = b.quant;
    if (b.constant) {
      const std::vector<float> phys = mode == 0 ? to_physical(b_data, y.shape, layout_of(y)) : b_data;
      // A full-size constant keeps the output's dims: flat, it could exceed the format's dim limit.
      const std::vector<int32_t> dims = mode == 0 ? y_dims : std::vector<int32_t>{int32_t(phys.size())};
      if (int8()) {
        bq = spec_of(b);
        bid = constant(b.name, DType::kInt8, dims, narrowed<int8_t>(quantize_values(phys, bq)));
      } else {
        bid = constant(b.name, DType::kFloat32, dims, phys);
      }
    } else if (bid < 0) {
      bid = activation(b_id);
    }
    const int out = activation(op.outputs[0]);
    if (int8()) {
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
        set_add_rescale(p, add_rescale(a.quant.scale, bq.scale, y.quant.scale));
      } else {
        const QuantizedMultiplier m = mul_rescale(a.quant.scale, bq.scale, y.quant.scale);
        p.output_multiplier = m.multiplier;
        p.output_shift = m.shift;
      }
    }
    emit(binary_kernel(op.kind, int8()), {aid, bid}, {out}, params_bytes(p), &op);
  }

  static KernelId binary_kernel(const std::string& kind, bool int8) {
    if (kind == "add") return int8 ? KernelId::add_s8 : KernelId::add_f32;
    if (kind == "sub") return int8 ? KernelId::sub_s8 : KernelId::sub_f32;
    if (kind == "mul") return int8 ? KernelId::mul_s8 : KernelId::mul_f32;
    if (kind == "minimum") return int8 ? KernelId::minimum_s8 : KernelId::minimum_f32;
    return int8 ? KernelId::maximum_s8 : KernelId::maximum_f32;
  }
};

}  // namespace

std::vector<OpDef> binary_ops() {
  const auto binary = [](const char* kind, uint32_t more_traits = 0) {
    return OpDef{kind, infer_binary, lower_with<BinaryLowering, &BinaryLowering::lower_binary>, kBinary | more_traits,
                 OutputQuant::kObserved, RowLift::kElementwise, ConstantQuant::kOperandRange};
  };
  return {binary("add", kFoldable), binary("sub"), binary("mul", kFoldable), binary("minimum"), binary("maximum")};
}

}  // namespace mcuflow::compiler
