#include "mcuflow/compiler/quantizer.h"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <limits>
#include <map>
#include <sstream>

#include "mcuflow/compiler/op_registry.h"

namespace mcuflow::compiler {

void observe_range(Tensor& t, const float* values, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    t.observed_min = std::min(t.observed_min, values[i]);
    t.observed_max = std::max(t.observed_max, values[i]);
  }
}

Quant quant_for_range(float lo, float hi, int bits) {
  lo = std::min(lo, 0.0f);
  hi = std::max(hi, 0.0f);
  Quant q;
  q.valid = true;
  q.bits = bits;
  const float steps = float(q.type_max() - q.type_min());
  // A range that never moved (a tensor that is always 0) gets a unit range: any scale
  // represents it exactly, and a tiny one would blow up the next layer's int32 bias.
  q.scale = hi - lo < 1e-6f ? 1.0f / steps : (hi - lo) / steps;
  q.zero_point = int32_t(std::clamp(std::round(float(q.type_min()) - lo / q.scale), float(q.type_min()),
                                    float(q.type_max())));
  return q;
}

Quant symmetric_range_quant(float lo, float hi, int bits) {
  Quant q;
  q.valid = true;
  q.bits = bits;
  q.symmetric = true;
  const float m = std::max(std::fabs(lo), std::fabs(hi));
  // As in quant_for_range, a range that never moved gets a unit one.
  q.scale = (m < 1e-6f ? 1.0f : m) / float(q.type_max());
  return q;
}

namespace {

// Symmetric int16 with scale 1/32768: values in [-1, 1] (1.0 and -1.0 clamped to +-32767).
Quant unit_quant_int16() {
  Quant q;
  q.valid = true;
  q.bits = kWideActivationBits;
  q.symmetric = true;
  q.scale = std::ldexp(1.0f, 1 - kWideActivationBits);
  return q;
}

}  // namespace

Quant mask_quant() {
  Quant q;
  q.valid = true;
  q.bits = kActivationBits;
  q.scale = 1.0f;
  return q;
}

namespace {

// The scale of the group of `values` (largest magnitude m > 0) whose symmetric `q_max`-level
// quantization has the least squared error: m * k / (100 q_max) for k = 50 … 100, the first
// least (k = 100 is m / q_max, no clipping). At 4 bits the outliers that set m leave most values
// a few steps: clipping them buys finer steps for the rest (on DS-CNN's weights alone the output
// SNR goes from 3.2 to 6.1 dB). Rounded as quantize_values rounds: the float quotient.
float least_squares_scale(const std::vector<float>& values, float m, int64_t q_max) {
  double best_error = std::numeric_limits<double>::infinity();
  float best = m / float(q_max);
  for (int k = 50; k <= 100; ++k) {
    const float scale = float(double(m) * k / (100.0 * double(q_max)));
    double error = 0;
    for (float v : values) {
      const double code = std::clamp(double(std::round(v / scale)), double(-q_max), double(q_max));
      error += (double(v) - code * double(scale)) * (double(v) - code * double(scale));
    }
    if (error < best_error) best_error = error, best = scale;
  }
  return best;
}

}  // namespace

Quant symmetric_quant(const Tensor& t, int axis, int bits) {
  Quant q;
  q.valid = true;
  q.bits = bits;
  q.symmetric = true;
  q.axis = axis;
  const size_t count = axis < 0 ? 1 : size_t(t.shape[size_t(axis)]);
  const AxisWalk walk(t.shape, axis);
  std::vector<float> max_abs(count, 0.0f);
  for (size_t i = 0; i < t.data.size(); ++i)
    max_abs[walk.index(i)] = std::max(max_abs[walk.index(i)], std::fabs(t.data[i]));
  std::vector<std::vector<float>> groups(bits < kWeightBits ? count : 0);
  for (size_t i = 0; i < t.data.size() && !groups.empty(); ++i) groups[walk.index(i)].push_back(t.data[i]);
  for (size_t g = 0; g < count; ++g) {
    const float m = max_abs[g];
    const float scale = m <= 0.0f ? 1.0f : groups.empty() ? m / float(q.type_max()) : least_squares_scale(groups[g], m, q.type_max());
    if (axis < 0) q.scale = scale;
    else q.scales.push_back(scale), q.zero_points.push_back(0);
  }
  return q;
}

Quant bias_quant(const Quant& input, const Quant& weight, int64_t channels) {
  Quant q;
  q.valid = true;
  q.bits = input.bits > kActivationBits ? kWideBiasBits : kBiasBits;
  q.symmetric = true;
  q.axis = 0;
  for (int64_t c = 0; c < channels; ++c) {
    q.scales.push_back(double(input.scale) * weight.scale_at(weight.per_axis() ? size_t(c) : 0));
    q.zero_points.push_back(0);
  }
  return q;
}

std::vector<int64_t> quantize_values(const std::vector<float>& values, const Quant& q, const Shape& shape) {
  if (q.per_axis() && (size_t(q.axis) >= shape.size() || size_t(shape[size_t(q.axis)]) != q.scales.size()))
    throw CompileError("internal: a per-axis quantization of " + std::to_string(q.scales.size()) +
                       " scales along dim " + std::to_string(q.axis) + " of a tensor of shape " + shape_str(shape));
  const AxisWalk walk(shape, q.axis);
  std::vector<int64_t> out(values.size());
  for (size_t i = 0; i < values.size(); ++i) {
    const size_t a = walk.index(i);
    double v;
    if (q.bits <= 16) {  // float32 scales: the float quotient, as PyTorch's float arithmetic rounds it
      v = double(std::round(values[i] / float(q.scale_at(a))) + float(q.zero_point_at(a)));
    } else {
      v = std::round(double(values[i]) / q.scale_at(a)) + double(q.zero_point_at(a));
    }
    out[i] = int64_t(std::clamp(v, double(q.q_min()), double(q.q_max())));
  }
  return out;
}

AxisWalk::AxisWalk(const Shape& shape, int axis) {
  if (axis < 0) return;
  size_ = size_t(shape[size_t(axis)]);
  for (size_t d = size_t(axis) + 1; d < shape.size(); ++d) inner_ *= size_t(shape[d]);
}

namespace {

// A pad keeps its input's quantization when the pad value lies inside the input's range
// (zero always does); otherwise the output needs a range covering the value too.
bool value_fits(const Op& op, const Quant& in) {
  const double value = op.float_attr("value");
  return value >= double(in.scale) * double(in.type_min() - in.zero_point) &&
         value <= double(in.scale) * double(in.type_max() - in.zero_point);
}

bool was_observed(const Tensor& t) { return t.observed_min <= t.observed_max; }

// Whether the lowering of average `op` can requantize its sums to an output spec of its own
// (reduce_s8): a mean, or an average pool whose one window is the whole image.
bool averages_whole_input(const Graph& g, const Op& op) {
  if (op.kind == "mean") return true;
  const Shape& x = g.tensors[size_t(op.inputs[0])].shape;
  const Shape& y = g.tensors[size_t(op.outputs[0])].shape;
  if (x.size() != 4 || y.size() != 4 || y[2] != 1 || y[3] != 1) return false;
  if (op.kind == "adaptive_avg_pool2d") return true;
  if (op.kind != "avg_pool2d") return false;
  const auto all_zero = [&](const char* name) {
    if (!op.has_attr(name)) return true;
    const auto& v = op.ints_attr(name);
    return std::all_of(v.begin(), v.end(), [](int64_t p) { return p == 0; });
  };
  std::vector<int64_t> kernel = op.ints_attr("kernel");
  if (kernel.size() == 1) kernel.push_back(kernel[0]);
  return kernel == std::vector<int64_t>{x[2], x[3]} && all_zero("padding") && all_zero("padding_end");
}

// An average of `bits`-bit values whose output range is 2x narrower than its input's spec covers
// (an int8 average keeping its input's spec would leave 1 of its 8 bits unused), where the
// lowering can give it a spec of its own: its reduce_s8 has a kernel on every tier.
bool average_needs_own_spec(const Graph& g, const Op& op, const Quant& in, int bits) {
  const Tensor& y = g.tensors[size_t(op.outputs[0])];
  if (bits != kActivationBits || !was_observed(y) || !averages_whole_input(g, op)) return false;
  const double covered = double(in.scale) * double(in.type_max() - in.type_min());
  const double observed = double(std::max(y.observed_max, 0.0f)) - double(std::min(y.observed_min, 0.0f));
  return 2.0 * observed <= covered;
}

// The spec of `bits`-bit activations over range [lo, hi]: asymmetric int8, symmetric int16.
Quant activation_quant(float lo, float hi, int bits) {
  return bits == kActivationBits ? quant_for_range(lo, hi, bits) : symmetric_range_quant(lo, hi, bits);
}

// The range a `bits`-bit spec of observed tensor `t` covers: int8 the observer's choice; int16,
// whose steps are 256x finer (clipping buys nothing), every calibration value.
Range calibrated_range(const Tensor& t, int bits) {
  if (bits == kWideActivationBits && t.seen_min <= t.seen_max) return Range{t.seen_min, t.seen_max};
  return Range{t.observed_min, t.observed_max};
}

Quant observed_quant(const Tensor& t, int bits) {
  if (t.quant.given) return t.quant;
  if (!was_observed(t))
    throw CompileError("tensor " + t.name + " has no given quantization and was never observed during calibration "
                       "(pass calibration data, or quantize it in the model's graph)");
  const Range r = calibrated_range(t, bits);
  return activation_quant(r.lo, r.hi, bits);
}

// Softmax outputs lie in [0, 1): int8 2^8 steps from the lowest integer; int16 symmetric with
// 2^15 steps from 0 (TFLite's int16 softmax output), 1.0 itself clamped to 32767.
Quant softmax_output_quant(int bits) {
  if (bits == kWideActivationBits) return unit_quant_int16();
  Quant q;
  q.valid = true;
  q.bits = kActivationBits;
  q.scale = std::ldexp(1.0f, -kActivationBits);
  q.zero_point = int32_t(q.type_min());
  return q;
}

// Gives constant input `slot` of `op` the spec `q`: a spec from the front end stays; a constant
// that another op already reads with another spec (shared weights) is copied first.
void give_constant_quant(Graph& g, Op& op, size_t slot, Quant q) {
  Tensor& t = g.tensors[size_t(op.inputs[slot])];
  if (t.quant.given) return;
  if (t.quant.valid && t.quant != q) {
    Tensor copy = t;
    copy.name += "." + std::to_string(g.tensors.size());
    copy.quant = std::move(q);
    op.inputs[slot] = g.add_tensor(std::move(copy));
    return;
  }
  t.quant = std::move(q);
}

bool is_constant_input(const Graph& g, const Op& op, size_t slot) {
  return slot < op.inputs.size() && g.tensors[size_t(op.inputs[slot])].constant;
}

std::string scale_str(double scale) {
  std::ostringstream os;
  os << scale;
  return os.str();
}

std::string axis_str(int axis) { return axis < 0 ? "per tensor" : "per index of dim " + std::to_string(axis); }

// A given weight spec must be one the op's kernel takes: symmetric, per output channel along
// `axis` (convolutions) or per tensor (linear also per output feature: its kernel has that mode).
void check_given_weight(const Op& op, const Tensor& w, int axis) {
  const Quant& q = w.quant;
  if (!q.given) return;
  if (!q.symmetric)
    throw CompileError(op.where() + ": weight " + w.name +
                       " has a given asymmetric quantization; the kernels take symmetric int8 weights (zero point 0)");
  if (q.axis != axis && !(op.kind == "linear" && q.axis == 0))
    throw CompileError(op.where() + ": weight " + w.name + " is quantized " + axis_str(q.axis) + "; the kernel takes " +
                       (axis < 0 ? "one scale per tensor" : "one scale per output channel (dim " + std::to_string(axis) + ")"));
}

// An output the kernel derives (its input's spec, softmax's fixed one) may be given only as that.
void check_given_output(const Op& op, const Tensor& y, const Quant& derived) {
  if (y.quant.scale == derived.scale && y.quant.zero_point == derived.zero_point && !y.quant.per_axis()) return;
  throw CompileError(op.where() + ": output " + y.name + " is given scale " + scale_str(y.quant.scale) + ", zero point " +
                     std::to_string(y.quant.zero_point) + "; the kernel's output has scale " + scale_str(derived.scale) +
                     ", zero point " + std::to_string(derived.zero_point) +
                     (op.kind == "softmax" ? "" : " (its input's)"));
}

// The constant inputs of `op` that its kernel (of `bits`-bit activations) reads as integers, by
// the registry's rule; weights of `weight_bits` where an int4-weight kernel takes the op (always
// per output channel: at 4 bits one scale per tensor loses too much), else int8.
void assign_constant_quantization(Graph& g, Op& op, ConstantQuant rule, int bits, int weight_bits) {
  const auto weights = [&](int axis) {
    if (!is_constant_input(g, op, 1)) return;
    const Tensor& w = g.tensors[size_t(op.inputs[1])];
    check_given_weight(op, w, axis);
    const int64_t channels = w.shape[size_t(std::max(axis, 0))];
    const bool int4 = weight_bits == kInt4WeightBits && int4_rejection(g, op).empty();
    give_constant_quant(g, op, 1, int4 ? symmetric_quant(w, 0, kInt4WeightBits) : symmetric_quant(w, axis, kWeightBits));
    if (!is_constant_input(g, op, 2)) return;
    const Quant& x = g.tensors[size_t(op.inputs[0])].quant;
    give_constant_quant(g, op, 2, bias_quant(x, g.tensors[size_t(op.inputs[1])].quant, channels));
  };
  switch (rule) {
    case ConstantQuant::kWeightsPerChannel: return weights(0);
    case ConstantQuant::kWeightsPerChannelDim1: return weights(1);
    case ConstantQuant::kWeightsPerTensor: return weights(-1);
    case ConstantQuant::kOperandRange:
      for (size_t slot = 0; slot < op.inputs.size(); ++slot) {
        if (!is_constant_input(g, op, slot)) continue;
        const std::vector<float>& v = g.tensors[size_t(op.inputs[slot])].data;
        const auto [lo, hi] = std::minmax_element(v.begin(), v.end());
        give_constant_quant(g, op, slot, activation_quant(v.empty() ? 0.0f : *lo, v.empty() ? 0.0f : *hi, bits));
      }
      return;
    case ConstantQuant::kOutput:
      for (size_t slot = 0; slot < op.inputs.size(); ++slot) {
        if (is_constant_input(g, op, slot)) give_constant_quant(g, op, slot, g.tensors[size_t(op.outputs[0])].quant);
      }
      return;
    case ConstantQuant::kNone: return;
  }
}

// The rule as it applies at `bits` wide: kWithinOne is kObserved at int8.
OutputQuant observed_rule(OutputQuant rule, int bits) {
  return rule == OutputQuant::kWithinOne && bits == kActivationBits ? OutputQuant::kObserved : rule;
}

// The spec of `op`'s output by the registry's rule (kObserved: `bits`-bit).
Quant output_quant(const Graph& g, const Op& op, OutputQuant rule, int bits) {
  if (g.tensors[size_t(op.outputs[0])].element == Element::kMask) return mask_quant();  // (a where of masks)
  const Quant& in = g.tensors[size_t(op.inputs[0])].quant;
  if (rule == OutputQuant::kInput || (rule == OutputQuant::kInputWhenValueFits && value_fits(op, in)) ||
      (rule == OutputQuant::kAverage && !average_needs_own_spec(g, op, in, bits))) {
    Quant q = in;
    q.given = false;
    return q;
  }
  if (rule == OutputQuant::kSoftmax) return softmax_output_quant(bits);
  if (rule == OutputQuant::kWithinOne && bits == kWideActivationBits) return unit_quant_int16();
  if (rule == OutputQuant::kMask) return mask_quant();
  if (rule == OutputQuant::kUnitRange) return quant_for_range(0.0f, 1.0f, kActivationBits);
  if (rule == OutputQuant::kTable) return g.tensors[size_t(op.inputs[1])].quant;
  return observed_quant(g.tensors[size_t(op.outputs[0])], bits);
}

// A given spec must be one the int8 kernels take: 8-bit weights, 8-bit per-tensor activations.
void check_given_quant(const Tensor& t) {
  const Quant& q = t.quant;
  if (!q.given) return;
  const int bits = t.constant ? kWeightBits : kActivationBits;
  if (q.bits != bits)
    throw CompileError("tensor " + t.name + " has a given " + std::to_string(q.bits) + "-bit quantization; the kernels take " +
                       std::to_string(bits) + "-bit " + (t.constant ? "weights" : "activations"));
  if (!t.constant && q.per_axis())
    throw CompileError("tensor " + t.name + " has a given per-axis quantization; the kernels take one scale and zero point per activation");
}

}  // namespace

void give_inputs_back(Graph& g) {
  for (auto op = g.ops.rbegin(); op != g.ops.rend(); ++op) {
    const OpDef* def = find_op(op->kind);
    if (!def || (def->output_quant != OutputQuant::kInput && def->output_quant != OutputQuant::kAverage) ||
        op->inputs.empty())
      continue;
    const Tensor& y = g.tensors[size_t(op->outputs[0])];
    Tensor& x = g.tensors[size_t(op->inputs[0])];
    if (y.quant.given && !x.quant.given && !x.constant) x.quant = y.quant;
  }
}

namespace {

// Whether an int16 kernel takes `op`: never an op writing a state's update (states are int8).
bool takes_int16(const Graph& g, const Op& op, const OpDef* def) {
  if (def == nullptr || def->int16 == nullptr || !def->int16(g, op)) return false;
  return std::none_of(g.states.begin(), g.states.end(), [&](const StateTensor& s) { return s.update == op.outputs[0]; });
}

bool keeps_input_width(const OpDef* def) {
  return def->output_quant == OutputQuant::kInput || def->output_quant == OutputQuant::kAverage;
}

// The activation width `op` reads and writes where it was asked for `wanted_bits`: int16 where
// its int16 kernel takes it (an op keeping its input's quantization keeps its input's width),
// int8 elsewhere.
int op_width(const Graph& g, const Op& op, const OpDef* def, int wanted_bits) {
  if (!takes_int16(g, op, def)) return kActivationBits;
  if (keeps_input_width(def)) return g.tensors[size_t(op.inputs[0])].quant.bits;
  return wanted_bits;
}

bool has_weights(const Graph& g, const Op& op, const OpDef* def) {
  return def && (def->constant_quant == ConstantQuant::kWeightsPerChannel ||
                 def->constant_quant == ConstantQuant::kWeightsPerChannelDim1 ||
                 def->constant_quant == ConstantQuant::kWeightsPerTensor) &&
         is_constant_input(g, op, 1);
}

// The per-layer choices by layer name, each checked against what its op's kernels take.
std::map<std::string, const LayerPrecision*> checked_choices(const Graph& g, const std::vector<LayerPrecision>& layers) {
  std::map<std::string, const LayerPrecision*> chosen;
  if (layers.empty()) return chosen;
  std::map<std::string, PrecisionLayer> known;
  std::string names;
  for (const PrecisionLayer& l : precision_layers(g)) {
    names += (names.empty() ? "" : ", ") + l.layer;
    known.emplace(l.layer, l);
  }
  for (const LayerPrecision& c : layers) {
    const auto found = known.find(c.layer);
    if (found == known.end())
      throw CompileError("layer '" + c.layer + "' is no op whose precision can be chosen (the layers: " + names + ")");
    const PrecisionLayer& l = found->second;
    const std::string where = "layer " + c.layer + " (" + l.kind + (l.source.empty() ? "" : " at " + l.source) + ")";
    if ((c.activation_bits != kActivationBits && c.activation_bits != kWideActivationBits) ||
        (c.weight_bits != kWeightBits && c.weight_bits != kInt4WeightBits))
      throw CompileError(where + ": activations are int8 or int16 and weights int8 or int4");
    if (c.activation_bits == kWideActivationBits && c.weight_bits == kInt4WeightBits)
      throw CompileError(where + ": int16 activations take int8 weights");
    if (c.activation_bits == kWideActivationBits && !l.int16) throw CompileError(where + ": no int16 kernel takes it");
    if (c.weight_bits == kInt4WeightBits && !l.int4)
      throw CompileError(where + ": no int4-weight kernel takes it");
    if (!chosen.emplace(c.layer, &c).second) throw CompileError(where + " is chosen twice");
  }
  return chosen;
}

}  // namespace

std::vector<PrecisionLayer> precision_layers(const Graph& g) {
  std::vector<PrecisionLayer> layers;
  for (const Op& op : g.ops) {
    const OpDef* def = find_op(op.kind);
    if (!def || op.outputs.empty()) continue;
    PrecisionLayer l{g.tensors[size_t(op.outputs[0])].name, op.kind, op.source};
    l.int16 = takes_int16(g, op, def) && observed_rule(def->output_quant, kActivationBits) == OutputQuant::kObserved;
    l.int4 = has_weights(g, op, def) && int4_rejection(g, op).empty();
    if (l.int16 || l.int4) layers.push_back(std::move(l));
  }
  return layers;
}

namespace {

// The range a requantization to `bits` wide covers: the tensor's calibrated range, else (a
// state, a given spec) the range its spec represents.
Range covered_range(const Tensor& t, int bits) {
  if (was_observed(t)) return calibrated_range(t, bits);
  const Quant& q = t.quant;
  return Range{float(double(q.scale) * double(q.type_min() - q.zero_point)),
               float(double(q.scale) * double(q.type_max() - q.zero_point))};
}

// Inserts "requantize" ops before op `at` for its activation inputs that are not `bits` wide;
// one per tensor and width, which later readers share. Returns the index of the op after them.
size_t read_at_width(Graph& g, size_t at, int bits, std::map<std::pair<int, int>, int>& converted) {
  for (size_t slot = 0; slot < g.ops[at].inputs.size(); ++slot) {
    const int x = g.ops[at].inputs[slot];
    const Tensor& t = g.tensors[size_t(x)];
    if (t.constant || t.element != Element::kReal || t.quant.bits == bits) continue;
    auto found = converted.find({x, bits});
    if (found == converted.end()) {
      Tensor copy;
      copy.name = t.name + (bits == kActivationBits ? ".int8" : ".int16");
      copy.shape = t.shape;
      copy.nhwc = t.nhwc;
      copy.observed_min = t.observed_min;
      copy.observed_max = t.observed_max;
      copy.seen_min = t.seen_min;
      copy.seen_max = t.seen_max;
      const Range r = covered_range(t, bits);
      copy.quant = activation_quant(r.lo, r.hi, bits);
      Op requantize;
      requantize.kind = "requantize";
      requantize.source = g.ops[at].source;
      requantize.inputs = {x};
      requantize.outputs = {g.add_tensor(std::move(copy))};
      found = converted.emplace(std::make_pair(x, bits), requantize.outputs[0]).first;
      g.ops.insert(g.ops.begin() + std::ptrdiff_t(at), std::move(requantize));
      ++at;
    }
    g.ops[at].inputs[slot] = found->second;
  }
  return at;
}

}  // namespace

void assign_quantization(Graph& g, int activation_bits, int weight_bits, const std::vector<LayerPrecision>& layers) {
  for (const Tensor& t : g.tensors) check_given_quant(t);
  const std::map<std::string, const LayerPrecision*> chosen = checked_choices(g, layers);
  const bool mixed_widths = activation_bits != kActivationBits ||
                            std::any_of(layers.begin(), layers.end(),
                                        [](const LayerPrecision& c) { return c.activation_bits != kActivationBits; });
  // An input is int16 in an int16 program, and where a layer chosen int16 reads it (the int16
  // layer then sees the input as precisely as an int16 program's; int8 readers get a copy).
  const auto read_at_int16 = [&](int t) {
    return std::any_of(g.ops.begin(), g.ops.end(), [&](const Op& op) {
      const auto choice = chosen.find(g.tensors[size_t(op.outputs[0])].name);
      return choice != chosen.end() && choice->second->activation_bits == kWideActivationBits &&
             std::find(op.inputs.begin(), op.inputs.end(), t) != op.inputs.end();
    });
  };
  for (int t : g.inputs) {
    if (g.tensors[t].element == Element::kReal)
      g.tensors[t].quant = observed_quant(g.tensors[t], read_at_int16(t) ? kWideActivationBits : activation_bits);
  }
  // A state and the value written into it share one spec, so that the update is stored as it is:
  // the range of both and of the initial value (a state is observed holding each run's update).
  std::map<int, Quant> update_spec;
  for (const StateTensor& s : g.states) {
    Tensor& state = g.tensors[size_t(s.tensor)];
    const Tensor& update = g.tensors[size_t(s.update)];
    float lo = std::min(state.observed_min, update.observed_min), hi = std::max(state.observed_max, update.observed_max);
    for (float v : s.initial) lo = std::min(lo, v), hi = std::max(hi, v);
    if (!state.quant.given) state.quant = quant_for_range(lo, hi, kActivationBits);
    update_spec[s.update] = state.quant;
  }
  std::map<std::pair<int, int>, int> converted;  // (tensor, width) -> its requantized copy
  for (size_t i = 0; i < g.ops.size(); ++i) {
    const OpDef* def = find_op(g.ops[i].kind);
    const auto choice = chosen.find(g.tensors[size_t(g.ops[i].outputs[0])].name);
    const LayerPrecision* layer = choice == chosen.end() ? nullptr : choice->second;
    const int bits = op_width(g, g.ops[i], def, layer ? layer->activation_bits : activation_bits);
    const int op_weight_bits = layer ? layer->weight_bits : weight_bits;
    if (mixed_widths) i = read_at_width(g, i, bits, converted);
    if (def && def->output_quant == OutputQuant::kNone) continue;
    Op& op = g.ops[i];
    // A table's spec comes from its values, before the rows read from it take it.
    if (def && def->output_quant == OutputQuant::kTable) assign_constant_quantization(g, op, def->constant_quant, bits, op_weight_bits);
    Tensor& y = g.tensors[op.outputs[0]];
    const OutputQuant rule = observed_rule(def ? def->output_quant : OutputQuant::kObserved, bits);
    const auto state = update_spec.find(op.outputs[0]);
    if (!y.quant.given) {
      y.quant = rule == OutputQuant::kObserved && state != update_spec.end() ? state->second
                                                                             : output_quant(g, op, rule, bits);
    } else if (rule != OutputQuant::kObserved &&
               !(rule == OutputQuant::kAverage && bits == kActivationBits && averages_whole_input(g, op))) {
      const Quant derived = output_quant(g, op, rule, bits);
      if (!derived.given) check_given_output(op, y, derived);  // (a pad whose value does not fit: observed)
    }
    assign_constant_quantization(g, op, def ? def->constant_quant : ConstantQuant::kNone, bits, op_weight_bits);
  }
}

namespace {

bool corrects_bias(const Op& op) { return (op.kind == "conv2d" && !op.has_attr("ring_frames")) || op.kind == "linear"; }

}  // namespace

TapMeans::TapMeans(const Graph& g) : g_(g) {
  for (size_t i = 0; i < g.ops.size(); ++i) {
    const Op& op = g.ops[i];
    if (!corrects_bias(op) || !is_constant_input(g, op, 1)) continue;
    const Tensor& w = g.tensors[size_t(op.inputs[1])];
    const int64_t taps = op.kind == "conv2d" ? w.shape[2] * w.shape[3] : 1;
    const Shape& x = g.tensors[size_t(op.inputs[0])].shape;
    readers_[op.inputs[0]].push_back(Reader{int(i), op.outputs[0], std::vector<double>(size_t(x[op.kind == "conv2d" ? 1 : x.size() - 1] * taps))});
  }
}

bool TapMeans::wants(int tensor) const { return readers_.count(tensor) != 0; }

void TapMeans::add(int tensor, const float* values) {
  const auto found = readers_.find(tensor);
  if (found == readers_.end()) return;
  const Shape& x = g_.tensors[size_t(tensor)].shape;
  const int64_t n = g_.tensors[size_t(tensor)].numel();
  for (Reader& r : found->second) {
    const Op& op = g_.ops[size_t(r.op)];
    if (op.kind == "linear") {
      const size_t features = r.sums.size();
      for (int64_t i = 0; i < n; ++i) r.sums[size_t(i) % features] += double(values[i]);
      r.count += uint64_t(n) / features;
      continue;
    }
    const Shape& w = g_.tensors[size_t(op.inputs[1])].shape;
    const Shape y = infer_shapes(g_, op)[0];
    const std::vector<int64_t> stride = op.ints_attr("stride"), pad = op.ints_attr("padding"),
                               dil = op.ints_attr("dilation");
    const int64_t c = x[1], h = x[2], wd = x[3], kh = w[2], kw = w[3];
    for (int64_t b = 0; b < x[0]; ++b)
      for (int64_t ci = 0; ci < c; ++ci) {
        const float* plane = values + (b * c + ci) * h * wd;
        for (int64_t ty = 0; ty < kh; ++ty)
          for (int64_t tx = 0; tx < kw; ++tx) {
            double sum = 0;
            for (int64_t oy = 0; oy < y[2]; ++oy) {
              const int64_t iy = oy * stride[0] - pad[0] + ty * dil[0];
              if (iy < 0 || iy >= h) continue;
              for (int64_t ox = 0; ox < y[3]; ++ox) {
                const int64_t ix = ox * stride[1] - pad[1] + tx * dil[1];
                if (ix >= 0 && ix < wd) sum += double(plane[iy * wd + ix]);
              }
            }
            r.sums[size_t((ci * kh + ty) * kw + tx)] += sum;
          }
      }
    r.count += uint64_t(x[0] * y[2] * y[3]);
  }
}

std::map<int, std::vector<double>> TapMeans::means() const {
  std::map<int, std::vector<double>> out;
  for (const auto& [tensor, readers] : readers_) {
    for (const Reader& r : readers) {
      if (r.count == 0) continue;
      std::vector<double>& mean = out[r.output];
      for (double s : r.sums) mean.push_back(s / double(r.count));
    }
  }
  return out;
}

BiasCorrection parse_bias_correction(const std::string& name) {
  if (name == "off") return BiasCorrection::kOff;
  if (name == "int4") return BiasCorrection::kInt4Weights;
  if (name == "all") return BiasCorrection::kAll;
  throw CompileError("unknown bias correction '" + name + "' (choose off, int4 or all)");
}

std::vector<std::string> correct_biases(Graph& g, const std::map<int, std::vector<double>>& tap_means,
                                        BiasCorrection which) {
  std::vector<std::string> corrected_layers;
  if (which == BiasCorrection::kOff) return corrected_layers;
  for (Op& op : g.ops) {
    const auto mean = tap_means.find(op.outputs[0]);
    if (mean == tap_means.end() || !corrects_bias(op) || !is_constant_input(g, op, 1)) continue;
    const Tensor& w = g.tensors[size_t(op.inputs[1])];
    const Quant& x = g.tensors[size_t(op.inputs[0])].quant;
    if (!w.quant.valid || w.quant.given || !x.valid) continue;
    if (which == BiasCorrection::kInt4Weights && w.quant.bits != kInt4WeightBits) continue;
    if (is_constant_input(g, op, 2) && g.tensors[size_t(op.inputs[2])].quant.given) continue;
    // conv2d weights (O, I / groups, kh, kw), linear (O, I): output channel o's weight row
    // multiplies the taps of its group's input channels, in the order of tap_means.
    const int64_t out_c = w.shape[0];
    const size_t row = size_t(w.numel() / out_c);
    const int64_t groups = op.kind == "conv2d" ? op.int_attr("groups") : 1;
    const std::vector<int64_t> q = quantize_values(w.data, w.quant, w.shape);
    std::vector<float> bias = is_constant_input(g, op, 2) ? g.tensors[size_t(op.inputs[2])].data
                                                          : std::vector<float>(size_t(out_c), 0.0f);
    for (int64_t o = 0; o < out_c; ++o) {
      const double scale = w.quant.scale_at(w.quant.per_axis() ? size_t(o) : 0);
      const double* taps = mean->second.data() + size_t(o / (out_c / groups)) * row;
      double shift = 0;
      for (size_t k = 0; k < row; ++k) {
        const size_t flat = size_t(o) * row + k;
        shift += (double(q[flat]) * scale - double(w.data[flat])) * taps[k];
      }
      bias[size_t(o)] = float(double(bias[size_t(o)]) - shift);
    }
    // A tensor of its own: another op may read the same bias. (add_constant may move the tensors
    // that w and x refer to: everything taken from them comes first.)
    const std::string name = (is_constant_input(g, op, 2) ? g.tensors[size_t(op.inputs[2])].name : w.name) + ".corrected";
    Quant quant = bias_quant(x, w.quant, out_c);
    const int corrected = g.add_constant(name, {out_c}, std::move(bias));
    g.tensors[size_t(corrected)].quant = std::move(quant);
    if (op.inputs.size() > 2) op.inputs[2] = corrected; else op.inputs.push_back(corrected);
    corrected_layers.push_back(g.tensors[size_t(op.outputs[0])].name);
  }
  return corrected_layers;
}

namespace {

const char* const kObserverNames[] = {"minmax", "percentile", "mse", "entropy"};

// How many bins from the start of [first, last) hold the first `rank` values, interpolating
// linearly inside the bin where the count is reached.
template <typename It>
double bins_holding(It first, It last, double rank) {
  double below = 0;
  size_t k = 0;
  for (It it = first; it != last; ++it, ++k) {
    const double count = double(*it);
    if (count > 0 && below + count >= rank) return double(k) + (rank - below) / count;
    below += count;
  }
  return double(k);
}

}  // namespace

Observer parse_observer(const std::string& name) {
  for (size_t i = 0; i < std::size(kObserverNames); ++i) {
    if (name == kObserverNames[i]) return Observer(i);
  }
  std::string known;
  for (const char* n : kObserverNames) known += (known.empty() ? "" : ", ") + std::string(n);
  throw CompileError("unknown observer '" + name + "' (" + known + ")");
}

const char* observer_name(Observer kind) { return kObserverNames[size_t(kind)]; }

void check_observer_options(const ObserverOptions& options) {
  if (options.kind == Observer::kPercentile && !(options.percentile > 50 && options.percentile <= 100)) {
    std::ostringstream os;
    os << "percentile must be a number above 50 and at most 100, got " << options.percentile;
    throw CompileError(os.str());
  }
}

Histogram::Histogram(float lo, float hi, int bins) : Histogram(bins) {
  if (!(lo < hi) || !std::isfinite(lo) || !std::isfinite(hi))
    throw CompileError("internal: a histogram needs a finite range with lo < hi");
  lo_ = lo, hi_ = hi;
}

Histogram::Histogram(int bins)
    : min_(std::numeric_limits<float>::infinity()), max_(-std::numeric_limits<float>::infinity()),
      counts_(size_t(bins), 0) {
  if (bins < 2 || bins % 2) throw CompileError("internal: a histogram needs an even number of bins");
}

// Grows [lo_, hi_] to hold [lo, hi] (and every value added so far): each doubling merges pairs of
// bins, placed so that the values' span sits in the middle of the new range.
void Histogram::cover(double lo, double hi) {
  if (!(lo_ < hi_)) {  // no range yet: the first values set it
    lo_ = lo, hi_ = hi > lo ? hi : lo + std::max(std::abs(lo) * 0x1p-20, 0x1p-100);
    return;
  }
  lo = std::min(lo, double(min_)), hi = std::max(hi, double(max_));
  const size_t n = counts_.size();
  while (lo < lo_ || hi > hi_) {
    const double width = (hi_ - lo_) / double(n);  // of an old bin; the new ones are twice as wide
    // The new range starts `shift` old bins (an even number, so old bins merge in pairs) below lo_.
    const double centred = (lo_ - (lo + hi) / 2) / width + double(n);
    const size_t shift = 2 * size_t(std::clamp(std::round(centred / 2), 0.0, double(n / 2)));
    std::vector<uint64_t> merged(n, 0);
    for (size_t i = 0; i < n; ++i) merged[std::min((i + shift) / 2, n - 1)] += counts_[i];
    counts_ = std::move(merged);
    lo_ -= double(shift) * width;
    hi_ = lo_ + 2 * double(n) * width;
  }
}

void Histogram::add(const float* values, size_t n) {
  float lo = std::numeric_limits<float>::infinity(), hi = -lo;
  for (size_t i = 0; i < n; ++i) {
    if (std::isfinite(values[i])) lo = std::min(lo, values[i]), hi = std::max(hi, values[i]);
  }
  if (!(lo <= hi)) return;
  cover(lo, hi);
  min_ = std::min(min_, lo), max_ = std::max(max_, hi);
  const double bins = double(counts_.size());
  const double per_unit = bins / (hi_ - lo_);
  for (size_t i = 0; i < n; ++i) {
    if (!std::isfinite(values[i])) continue;
    const double position = (double(values[i]) - lo_) * per_unit;
    ++counts_[position <= 0 ? 0 : position >= bins ? counts_.size() - 1 : size_t(position)];
  }
}

float Histogram::edge(size_t i) const {
  if (i >= counts_.size()) return float(hi_);
  return float(lo_ + (hi_ - lo_) * double(i) / double(counts_.size()));
}

Range percentile_range(const Histogram& h, double percentile) {
  const std::vector<uint64_t>& c = h.counts();
  double total = 0;
  for (uint64_t n : c) total += double(n);
  const double beyond = total * (100.0 - percentile) / 100.0;  // values clipped on each side
  const double width = (double(h.hi()) - double(h.lo())) / double(c.size());
  const double below = bins_holding(c.begin(), c.end(), beyond);
  const double above = bins_holding(c.rbegin(), c.rend(), beyond);
  // A side that does not reach past zero quantizes the same wherever it is (ranges include 0):
  // keep it as observed rather than report a meaningless clip (a ReLU output's many zeros).
  return Range{h.lo() >= 0 ? h.lo() : float(h.lo() + below * width),
               h.hi() <= 0 ? h.hi() : float(h.hi() - above * width)};
}

// The levels of the activations the histogram observers choose a range for: int8 (an int16
// activation takes every calibration value, calibrated_range).
constexpr int kObservedLevels = 1 << kActivationBits;

Range mse_range(const Histogram& h) {
  // Everything in bin units: bin k holds positions [k, k + 1), zero sits at `zero`.
  const std::vector<uint64_t>& c = h.counts();
  const size_t n = c.size();
  using Real = long double;
  // Prefix sums over bins below an edge: counts, first and second moments (uniform in a bin:
  // mean k + 1/2, mean square (k + 1/2)² + 1/12).
  std::vector<Real> count(n + 1, 0), moment1(n + 1, 0), moment2(n + 1, 0);
  for (size_t k = 0; k < n; ++k) {
    const Real center = Real(k) + 0.5L, weight = Real(c[k]);
    count[k + 1] = count[k] + weight;
    moment1[k + 1] = moment1[k] + weight * center;
    moment2[k + 1] = moment2[k] + weight * (center * center + 1.0L / 12);
  }
  const Real zero = -Real(h.lo()) / ((Real(h.hi()) - Real(h.lo())) / Real(n));
  // Squared distance of the values in bins [from, to) to position `clip`.
  const auto clipped_error = [&](size_t from, size_t to, Real clip) {
    return (moment2[to] - moment2[from]) - 2 * clip * (moment1[to] - moment1[from]) +
           clip * clip * (count[to] - count[from]);
  };
  // Lower clips at or below zero (or the lowest edge), upper clips at or above it (or the highest).
  const size_t last_lower = size_t(std::clamp(std::floor(zero), Real(0), Real(n)));
  const size_t first_upper = size_t(std::clamp(std::ceil(zero), Real(0), Real(n)));
  Real best_error = std::numeric_limits<Real>::infinity();
  size_t best_lower = 0, best_upper = n;
  for (size_t lower = 0; lower <= last_lower; ++lower) {
    const Real below = clipped_error(0, lower, Real(lower));
    for (size_t upper = n; upper >= std::max(first_upper, lower + 1); --upper) {
      const Real step = (std::max(Real(upper), zero) - std::min(Real(lower), zero)) / (kObservedLevels - 1);
      const Real error = below + clipped_error(upper, n, Real(upper)) +
                         (count[upper] - count[lower]) * step * step / 12;
      if (error < best_error) best_error = error, best_lower = lower, best_upper = upper;
    }
  }
  return Range{h.edge(best_lower), h.edge(best_upper)};
}

// The divergence KL(P || Q) of the histogram clipped to bins [lower, upper) (values beyond fold
// into the edge bins: P) from the int8 quantization of the values inside (Q: each of the kObservedLevels
// levels' count spread evenly over its non-empty bins; bins go to the nearest level). Q lacks the
// clipped values, so clipping costs; an empty edge bin that gathers clipped values counts as
// holding half a value in Q (fewer than one was seen there), so the cost stays finite.
static double clipped_divergence(const std::vector<uint64_t>& c, size_t lower, size_t upper, double zero) {
  const double low = std::min(double(lower), zero), step = (std::max(double(upper), zero) - low) / (kObservedLevels - 1);
  const auto level = [&](size_t i) { return size_t(std::lround((double(i) + 0.5 - low) / step)); };
  std::vector<double> mass(kObservedLevels, 0), filled(kObservedLevels, 0);
  double inside = 0;
  for (size_t i = lower; i < upper; ++i) mass[level(i)] += double(c[i]), filled[level(i)] += c[i] > 0, inside += double(c[i]);
  double below = 0, above = 0, total = inside;
  for (size_t i = 0; i < lower; ++i) below += double(c[i]);
  for (size_t i = upper; i < c.size(); ++i) above += double(c[i]);
  total += below + above;
  double divergence = 0;
  for (size_t i = lower; i < upper; ++i) {
    const double p = (double(c[i]) + (i == lower ? below : 0) + (i + 1 == upper ? above : 0)) / total;
    if (p == 0) continue;
    const double q = c[i] ? mass[level(i)] / filled[level(i)] / inside : 0.5 / inside;
    divergence += p * std::log(p / q);
  }
  return divergence;
}

Range entropy_range(const Histogram& h) {
  // Candidates shrink the observed range towards zero by one factor on both sides, from the whole
  // range down to kObservedLevels bins (one bin per int8 level: narrower, the histogram cannot see the loss).
  const std::vector<uint64_t>& c = h.counts();
  const size_t n = c.size();
  const double zero = -double(h.lo()) / ((double(h.hi()) - double(h.lo())) / double(n));
  double best = std::numeric_limits<double>::infinity();
  size_t best_lower = 0, best_upper = n;
  for (size_t span = n; span >= size_t(kObservedLevels); --span) {
    const double factor = double(span) / double(n);
    const size_t lower = size_t(std::clamp(std::round(zero - zero * factor), 0.0, double(n - 1)));
    const size_t upper = std::max(lower + 1, size_t(std::clamp(std::round(zero + (double(n) - zero) * factor),
                                                               0.0, double(n))));
    const double divergence = clipped_divergence(c, lower, upper, zero);
    if (divergence < best) best = divergence, best_lower = lower, best_upper = upper;
  }
  return Range{h.edge(best_lower), h.edge(best_upper)};
}

Range observer_range(const Histogram& h, const ObserverOptions& options) {
  Range r{h.min(), h.max()};
  if (options.kind == Observer::kPercentile) r = percentile_range(h, options.percentile);
  if (options.kind == Observer::kMse) r = mse_range(h);
  if (options.kind == Observer::kEntropy) r = entropy_range(h);
  // Bin edges may lie past the values (a grown histogram): no range reaches beyond them.
  return Range{std::max(r.lo, h.min()), std::min(r.hi, h.max())};
}

}  // namespace mcuflow::compiler
