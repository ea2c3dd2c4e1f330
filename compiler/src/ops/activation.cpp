// Element-wise activations on an int8 lookup table (int16: 513 entries, interpolated; activation_f32
// in float), and prelu.
#include "families.h"
#include "lowering.h"
#include "mcuflow/kernels/lut_s16.h"

namespace mcuflow::compiler {
namespace {

Shape infer_prelu(const Graph& g, const Op& op) {  // x, weight: one slope, or one per channel (dim 1)
  const Shape& x = in_shape(g, op, 0);
  const Tensor& w = g.tensors[op.inputs.at(1)];
  const int64_t channels = x.size() >= 2 ? x[1] : 1;
  if (op.inputs.size() != 2 || !w.constant || (w.numel() != 1 && w.numel() != channels))
    fail(op, "expects a constant weight of 1 or " + std::to_string(channels) + " slopes");
  return x;
}

// The element-wise activations: their kinds, and the ActivationFunction each one names.
constexpr std::pair<const char*, int> kFunctions[] = {
    {"sigmoid", k::kActSigmoid}, {"tanh", k::kActTanh}, {"hardswish", k::kActHardswish},
    {"hardsigmoid", k::kActHardsigmoid}, {"silu", k::kActSilu}, {"gelu", k::kActGelu},
    {"elu", k::kActElu}, {"leaky_relu", k::kActLeakyRelu}, {"neg", k::kActNeg}, {"abs", k::kActAbs},
    {"mish", k::kActMish}, {"log", k::kActLog}};

// The float function an ActivationFunction names, in double precision (int8 lookup tables).
double activation_value(int function, double alpha, double x) {
  const double relu6_shifted = std::clamp(x + 3.0, 0.0, 6.0);
  switch (function) {
    case k::kActSigmoid: return 1.0 / (1.0 + std::exp(-x));
    case k::kActTanh: return std::tanh(x);
    case k::kActHardswish: return x * relu6_shifted / 6.0;  // PyTorch's order of operations
    case k::kActHardsigmoid: return relu6_shifted / 6.0;
    case k::kActSilu: return x / (1.0 + std::exp(-x));
    case k::kActGelu: return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0)));
    case k::kActGeluTanh: return 0.5 * x * (1.0 + std::tanh(std::sqrt(2.0 / M_PI) * (x + 0.044715 * x * x * x)));
    case k::kActElu: return x > 0.0 ? x : alpha * std::expm1(x);
    case k::kActLeakyRelu: return x > 0.0 ? x : x * alpha;
    case k::kActNeg: return -x;
    case k::kActMish: return x * std::tanh(std::log1p(std::exp(x)));
    case k::kActLog: return x > 0.0 ? std::log(x) : -HUGE_VAL;  // inputs <= 0: the lowest output
    default: return std::fabs(x);
  }
}

struct ActivationLowering : Lowering {
  using Lowering::Lowering;

  static int activation_function(const std::string& kind) {
    for (const auto& [name, function] : kFunctions) {
      if (kind == name) return function;
    }
    return -1;
  }

  static float activation_alpha(const Op& op) {
    if (op.kind == "elu") return float(op.float_attr("alpha"));
    if (op.kind == "leaky_relu") return float(op.float_attr("negative_slope"));
    return 0.0f;
  }

  static int activation_function(const Op& op) {
    const bool tanh_gelu = op.kind == "gelu" && op.has_attr("approximate") && op.int_attr("approximate") != 0;
    return tanh_gelu ? k::kActGeluTanh : activation_function(op.kind);
  }

  void lower_activation(const Op& op) {
    const Tensor& x = tensor(op.inputs[0]);
    const Tensor& y = tensor(op.outputs[0]);
    const int function = activation_function(op);
    const float alpha = activation_alpha(op);
    const int in = activation(op.inputs[0]);
    const int out = activation(op.outputs[0]);
    if (!is_quantized()) {
      const k::ActivationParams p{int32_t(x.numel()), function, alpha};
      emit(KernelId::activation_f32, {in}, {out}, params_bytes(p), &op);
      return;
    }
    if (is_int16(op.inputs[0])) {
      const int tid = constant(y.name + ".table", DType::kInt16, {k::kLutS16Entries}, lut_s16_table(x.quant, y.quant, function, alpha));
      emit(KernelId::lut_s16, {in, tid}, {out}, params_bytes(k::LutParams{int32_t(x.numel())}), &op);
      return;
    }
    // Bit-exact by construction: every int8 input's real value through the exact function,
    // rounded (half away from zero) to the output's quantization.
    std::vector<int8_t> table;
    for (int64_t q = x.quant.type_min(); q <= x.quant.type_max(); ++q) {
      const double real = double(x.quant.scale) * double(q - x.quant.zero_point);
      const double v = std::round(activation_value(function, alpha, real) / y.quant.scale) + y.quant.zero_point;
      table.push_back(int8_t(std::clamp(v, double(y.quant.type_min()), double(y.quant.type_max()))));
    }
    const int tid = constant(y.name + ".table", DType::kInt8, {int32_t(table.size())}, table);
    emit(KernelId::lut_s8, {in, tid}, {out}, params_bytes(k::LutParams{int32_t(x.numel())}), &op);
  }

  // The exact function at the 513 points lut_s16 interpolates between (lut_s16.h: entry i at input
  // -32768 + 128 i), rounded half away from zero to the output's symmetric integers.
  static std::vector<int16_t> lut_s16_table(const Quant& x, const Quant& y, int function, float alpha) {
    std::vector<int16_t> table;
    for (int32_t i = 0; i < k::kLutS16Entries; ++i) {
      const double real = double(x.scale) * double(i * k::kLutS16Step - k::kLutS16InputOffset);
      const double v = std::round(activation_value(function, alpha, real) / y.scale);
      table.push_back(int16_t(std::clamp(v, double(y.q_min()), double(y.q_max()))));
    }
    return table;
  }

  // PReLU: the slopes per channel of the physical [outer][channels][inner] order (NHWC: channels
  // innermost), int8 slopes symmetric per tensor.
  void lower_prelu(const Op& op) {
    const Tensor& x = tensor(op.inputs[0]);
    const Tensor& y = tensor(op.outputs[0]);
    const Tensor& w = tensor(op.inputs[1]);
    k::PreluParams p{};
    p.channels = int32_t(w.numel());
    p.inner = 1;
    if (p.channels > 1 && layout_of(x) == Layout::kPlain)
      for (size_t d = 2; d < x.shape.size(); ++d) p.inner *= int32_t(x.shape[d]);
    p.outer = int32_t(x.numel() / (int64_t(p.channels) * p.inner));
    const int in = activation(op.inputs[0]);
    const int out = activation(op.outputs[0]);
    if (!is_quantized()) {
      const int wid = constant(w.name, DType::kFloat32, {p.channels}, w.data);
      emit(KernelId::prelu_f32, {in, wid}, {out}, params_bytes(p), &op);
      return;
    }
    const Quant& slopes = spec_of(w);
    const QuantizedMultiplier positive = quantize_multiplier(double(x.quant.scale) / y.quant.scale);
    const QuantizedMultiplier negative = quantize_multiplier(double(x.quant.scale) * slopes.scale / y.quant.scale);
    p.input_offset = -x.quant.zero_point;
    p.output_offset = y.quant.zero_point;
    p.positive_multiplier = positive.multiplier;
    p.positive_shift = positive.shift;
    p.negative_multiplier = negative.multiplier;
    p.negative_shift = negative.shift;
    p.act_min = int32_t(y.quant.type_min());
    p.act_max = int32_t(y.quant.type_max());
    const int wid = constant(w.name, DType::kInt8, {p.channels}, narrowed<int8_t>(quantized(w)));
    emit(KernelId::prelu_s8, {in, wid}, {out}, params_bytes(p), &op);
  }
};

}  // namespace

// The functions of int16 programs (lut_s16), and those of them whose values lie in [-1, 1].
bool takes_lut_s16(int function) {
  return function == k::kActSigmoid || function == k::kActTanh || function == k::kActHardswish ||
         function == k::kActHardsigmoid || function == k::kActSilu || function == k::kActGelu;
}
bool within_one(int function) {
  return function == k::kActSigmoid || function == k::kActTanh || function == k::kActHardsigmoid;
}

std::vector<OpDef> activation_ops() {
  std::vector<OpDef> ops;
  for (const auto& [kind, function] : kFunctions) {
    ops.push_back({kind, same_as_input, lower_with<ActivationLowering, &ActivationLowering::lower_activation>,
                   kLayoutAgnostic, within_one(function) ? OutputQuant::kWithinOne : OutputQuant::kObserved,
                   RowLift::kElementwise, ConstantQuant::kNone, nullptr,
                   takes_lut_s16(function) ? always_int16 : nullptr});
  }
  ops.push_back({"prelu", infer_prelu, lower_with<ActivationLowering, &ActivationLowering::lower_prelu>,
                 kLayoutAgnostic, OutputQuant::kObserved, RowLift::kPerChannel, ConstantQuant::kWeightsPerTensor});
  return ops;
}

}  // namespace mcuflow::compiler
