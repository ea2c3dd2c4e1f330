// relu and clamp: standalone, or fused into the op before them (fuse_activations).
#include <limits>

#include "families.h"
#include "lowering.h"

namespace mcuflow::compiler {
namespace {

Shape infer_clamp(const Graph& g, const Op& op) {
  if (!(op.float_attr("min") <= op.float_attr("max"))) fail(op, "min must not exceed max");
  return in_shape(g, op, 0);
}

struct ClampLowering : Lowering {
  using Lowering::Lowering;

  void lower_clamp(const Op& op) {
    const Tensor& x = tensor(op.inputs[0]);
    const Tensor& y = tensor(op.outputs[0]);
    float lo, hi;
    clamp_bounds(op, lo, hi);
    if (std::isinf(hi)) hi = 3.4e38f;  // the float kernel's open bound
    k::ClampParams p{};
    p.n = int32_t(x.numel());
    if (is_quantized()) {
      p.act_min = quantized_bound(lo, y.quant, false);
      p.act_max = quantized_bound(hi >= 3.4e38f ? INFINITY : hi, y.quant, true);
    }
    p.act_min_f = lo;
    p.act_max_f = hi;
    const int in = activation(op.inputs[0]);
    const int out = activation(op.outputs[0]);
    if (is_quantized() && (x.quant.scale != y.quant.scale || x.quant.zero_point != y.quant.zero_point)) {
      k::RequantizeParams r{};
      r.n = p.n;
      r.input_offset = -x.quant.zero_point;
      r.output_offset = y.quant.zero_point;
      const QuantizedMultiplier m = quantize_multiplier(double(x.quant.scale) / y.quant.scale);
      r.multiplier = m.multiplier;
      r.shift = m.shift;
      r.act_min = p.act_min;
      r.act_max = p.act_max;
      emit(KernelId::requantize_s8, {in}, {out}, params_bytes(r), &op);
      return;
    }
    emit(is_quantized() ? KernelId::clamp_s8 : KernelId::clamp_f32, {in}, {out}, params_bytes(p), &op);
  }
};

}  // namespace

bool clamp_bounds(const Op& op, float& lo, float& hi) {
  if (op.kind == "relu") {
    lo = 0.0f;
    hi = std::numeric_limits<float>::infinity();
    return true;
  }
  if (op.kind == "clamp") {
    lo = float(op.float_attr("min"));
    hi = float(op.float_attr("max"));
    return true;
  }
  return false;
}

std::vector<OpDef> clamp_ops() {
  const LowerRule lower_clamp = lower_with<ClampLowering, &ClampLowering::lower_clamp>;
  return {
      {"relu", same_as_input, lower_clamp, kLayoutAgnostic, OutputQuant::kInput, RowLift::kElementwise},
      {"clamp", infer_clamp, lower_clamp, kLayoutAgnostic, OutputQuant::kInput, RowLift::kElementwise},
  };
}

}  // namespace mcuflow::compiler
