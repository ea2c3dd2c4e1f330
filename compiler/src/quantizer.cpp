#include "mcuflow/compiler/quantizer.h"

#include <algorithm>
#include <cmath>

namespace mcuflow::compiler {

void observe_range(Tensor& t, const float* values, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    t.observed_min = std::min(t.observed_min, values[i]);
    t.observed_max = std::max(t.observed_max, values[i]);
  }
}

Quant quant_for_range(float lo, float hi) {
  lo = std::min(lo, 0.0f);
  hi = std::max(hi, 0.0f);
  Quant q;
  q.valid = true;
  // A range that never moved (a tensor that is always 0) gets a unit range: any scale
  // represents it exactly, and a tiny one would blow up the next layer's int32 bias.
  q.scale = hi - lo < 1e-6f ? 1.0f / 255.0f : (hi - lo) / 255.0f;
  q.zero_point = int32_t(std::clamp(std::round(-128.0f - lo / q.scale), -128.0f, 127.0f));
  return q;
}

namespace {

bool keeps_input_quant(const std::string& kind) {
  static const char* kKinds[] = {"max_pool2d", "avg_pool2d", "mean",  "adaptive_avg_pool2d", "reshape",
                                 "permute",    "relu",       "clamp", "identity",            "slice",
                                 "expand",     "amax",       "upsample_nearest2d"};
  return std::find(std::begin(kKinds), std::end(kKinds), kind) != std::end(kKinds);
}

// A pad keeps its input's quantization when the pad value lies inside the input's range
// (zero always does); otherwise the output needs a range covering the value too.
bool pad_keeps_input_quant(const Op& op, const Quant& in) {
  const double value = op.float_attr("value");
  return value >= double(in.scale) * (-128 - in.zero_point) && value <= double(in.scale) * (127 - in.zero_point);
}

Quant observed_quant(const Tensor& t) {
  if (!(t.observed_min <= t.observed_max))
    throw CompileError("tensor " + t.name + " was never observed during calibration");
  return quant_for_range(t.observed_min, t.observed_max);
}

}  // namespace

void assign_quantization(Graph& g) {
  for (int t : g.inputs) g.tensors[t].quant = observed_quant(g.tensors[t]);
  for (const Op& op : g.ops) {
    Tensor& y = g.tensors[op.outputs[0]];
    if (op.kind == "argmax") continue;  // int32 indices, not quantized
    if (keeps_input_quant(op.kind) || (op.kind == "pad" && pad_keeps_input_quant(op, g.tensors[op.inputs[0]].quant))) {
      y.quant = g.tensors[op.inputs[0]].quant;
    } else if (op.kind == "softmax") {
      y.quant = Quant{true, 1.0f / 256.0f, -128};
    } else {
      y.quant = observed_quant(y);
    }
  }
}

}  // namespace mcuflow::compiler
