#include "mcuflow/compiler/compile.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>
#include <iomanip>
#include <sstream>

#include "mcuflow/compiler/kernel_selection.h"
#include "mcuflow/compiler/layout.h"
#include "mcuflow/compiler/passes.h"
#include "mcuflow/compiler/planner.h"
#include "mcuflow/compiler/quantizer.h"
#include "mcuflow/compiler/serializer.h"
#include "mcuflow/runtime/runtime.h"

namespace mcuflow::compiler {

Target find_target(const std::string& name) {
  // Each core as usually built (the M33, M55 and M85 may also be built without some of these;
  // such a core needs its own entry).
  constexpr CoreFeatures kArmv6m = kThumb, kArmv7em = kThumb | kDsp | kFpu, kHelium = kArmv7em | kMve | kMveF;
  static const Target kTargets[] = {
      {"cortex-m0", kArmv6m},   {"cortex-m0plus", kArmv6m}, {"cortex-m3", kArmv6m},   {"cortex-m23", kArmv6m},
      {"cortex-m4", kArmv7em},  {"cortex-m7", kArmv7em},    {"cortex-m33", kArmv7em}, {"cortex-m35p", kArmv7em},
      {"cortex-m55", kHelium},  {"cortex-m85", kHelium},
      {"reference", 0},  // reference kernels only (any core): the baseline of kernel benchmarks
  };
  std::string known;
  for (const Target& t : kTargets) {
    if (t.name == name) return t;
    known += (known.empty() ? "" : ", ") + t.name;
  }
  throw CompileError("unknown target '" + name + "'; known targets: " + known);
}

namespace {

// `value` for JSON: shortest decimal that reads back as the same float.
std::string json_float(float value) {
  std::ostringstream os;
  os << std::setprecision(9) << value;
  return os.str();
}

// The first three items, then "..." when there are more.
std::string listed(const std::vector<std::string>& items) {
  std::string text;
  for (size_t i = 0; i < items.size() && i < 3; ++i) text += (i ? ", " : "") + items[i];
  return text + (items.size() > 3 ? ", ..." : "");
}

// A narrowed range that saturates more than this share of an activation's calibration values
// clips real signal, not a few outliers.
constexpr double kSaturatedShare = 0.01;

// The share of the histogram's values outside `range` (each bin's values spread uniformly over it).
double share_outside(const Histogram& h, const Range& range) {
  const auto& counts = h.counts();
  double outside = 0, total = 0;
  for (size_t i = 0; i < counts.size(); ++i) {
    const double left = h.edge(i), right = h.edge(i + 1), width = right - left;
    if (!(width > 0)) continue;  // a bin narrower than float resolution holds no values
    const double below = std::clamp((double(range.lo) - left) / width, 0.0, 1.0);
    const double above = std::clamp((right - double(range.hi)) / width, 0.0, 1.0);
    outside += double(counts[i]) * std::min(1.0, below + above);
    total += double(counts[i]);
  }
  return total > 0 ? outside / total : 0.0;
}

// Activations beyond this magnitude come from mis-scaled data (raw sensor counts, a unit
// mistake, uninitialized memory), not from a float32 model on its real inputs.
constexpr float kImplausibleMagnitude = 1e12f;

// The calibration ranges that cannot fit real inputs: tensors that held one value in every
// sample (all-zero data) and ranges no float32 model reaches on real inputs (data scaled by
// 1e30). One line each; the program still compiles (docs/quantization.md).
std::vector<std::string> degenerate_ranges(const Graph& g, size_t samples) {
  std::vector<std::string> constant, huge;
  for (const Tensor& t : g.tensors) {
    if (t.constant || !(t.observed_min <= t.observed_max)) continue;
    if (t.observed_min == t.observed_max) constant.push_back(t.name + " = " + json_float(t.observed_min));
    const float magnitude = std::max(std::fabs(t.observed_min), std::fabs(t.observed_max));
    if (magnitude > kImplausibleMagnitude) huge.push_back(t.name + " reaches " + json_float(magnitude));
  }
  std::vector<std::string> warnings;
  if (!constant.empty())
    warnings.push_back("calibration: " + std::to_string(constant.size()) + " activation(s) held one value in all " +
                       std::to_string(samples) + " samples (" + listed(constant) +
                       "): their ranges fit no other input; give varied, representative samples");
  if (!huge.empty())
    warnings.push_back("calibration: " + std::to_string(huge.size()) + " activation range(s) beyond 1e12 (" +
                       listed(huge) + "): is the calibration data scaled as the model's real inputs?");
  return warnings;
}

// Loads a program the compiler just made; a verifier rejection is a compiler bug, reported with
// the op (and model source line) whose record failed instead of as a bad program file.
Program load_compiled(const LoweredProgram& lp, const std::vector<uint8_t>& bytes, const std::string& what) {
  LoadFailure failure;
  auto program = Program::load(Span<const uint8_t>{bytes.data(), uint32_t(bytes.size())}, all_kernels(), &failure);
  if (program.ok()) return program.value();
  std::string where;
  if (failure.op >= 0) {
    const ProgramOp& op = lp.ops[size_t(failure.op)];
    where = " by " + op.ir_kind + (op.source.empty() ? "" : " at " + op.source) +
            (failure.slot >= 0 ? " (input slot " + std::to_string(failure.slot) + ")" : "");
  } else if (failure.tensor >= 0) {
    where = " at tensor " + lp.tensors[size_t(failure.tensor)].name;
  }
  throw CompileError("internal: the " + what + " program fails verification (" + error_name(program.error()) + ")" +
                     where + "; please report it");
}

}  // namespace

std::string calibrate(Graph& g, const Calibration& calibration, const ObserverOptions& observer,
                      const CalibrationProgress& progress, TapMeans* tap_means) {
  check_observer_options(observer);
  if (calibration.empty()) throw CompileError("calibration data is empty");
  LoweredProgram lp = lower(g, LowerOptions{Precision::kFloat32, false});
  // As for the compiled program: the planner may place a slice of a state inside it, and only
  // without its copy is that a valid program (no op but the state's update writes its bytes).
  drop_self_copies(lp);
  plan_memory(lp, /*reuse=*/false);
  const std::vector<uint8_t> bytes = serialize(lp);
  const Program program = load_compiled(lp, bytes, "calibration");
  std::vector<uint8_t> arena_storage(program.arena_bytes() + format::kArenaAlign);
  uint8_t* arena = arena_storage.data();
  while (reinterpret_cast<uintptr_t>(arena) % format::kArenaAlign) ++arena;
  auto session = Session::bind(program, Span<uint8_t>{arena, program.arena_bytes()});

  size_t runs_done = 0;
  // Runs every sample and hands each activation's values to `observe(ir_tensor, values, n, pt)`
  // (pt: the program tensor whose physical bytes they are, or nullptr for a model input's values
  // in logical order). The samples are a sequence: each run reads the states the one before it left.
  const auto run_samples = [&](const auto& observe) {
    (void)session.value().reset_state();
    for (size_t s = 0; s < calibration.size(); ++s) {
      const auto& sample = calibration[s];
      if (sample.size() != g.inputs.size())
        throw CompileError("calibration sample " + std::to_string(s) + " has " + std::to_string(sample.size()) +
                           " inputs; the model has " + std::to_string(g.inputs.size()));
      for (size_t i = 0; i < sample.size(); ++i) {
        const ProgramTensor& t = lp.tensors[lp.inputs[i]];
        if (sample[i].size() * 4 != t.byte_size())
          throw CompileError("calibration sample " + std::to_string(s) + " input " + std::to_string(i) + " has " +
                             std::to_string(sample[i].size()) + " values; expected shape " + shape_str(t.logical_shape));
        for (float v : sample[i]) {
          if (!std::isfinite(v))
            throw CompileError("calibration sample " + std::to_string(s) + " input " + std::to_string(i) + " contains NaN or Inf");
        }
        auto buf = session.value().input_buffer(uint32_t(i));
        if (t.dtype == format::DType::kInt32) {  // ids, which the front end sends as floats
          const std::vector<int32_t> ids(sample[i].begin(), sample[i].end());
          std::memcpy(buf.value().data, ids.data(), ids.size() * 4);
          continue;
        }
        const auto phys = logical_to_physical(reinterpret_cast<const uint8_t*>(sample[i].data()), t.logical_shape, t.layout, 4);
        std::memcpy(buf.value().data, phys.data(), phys.size());
        observe(g.inputs[i], sample[i].data(), sample[i].size(), nullptr);
      }
      const Error e = session.value().run();
      if (e != Error::kOk) throw CompileError(std::string("internal: calibration run failed: ") + error_name(e));
      for (size_t t = 0; t < lp.tensors.size(); ++t) {
        const ProgramTensor& pt = lp.tensors[t];
        if (pt.ir_tensor < 0 || pt.constant || pt.dtype != format::DType::kFloat32) continue;  // not argmax indices
        auto buf = session.value().tensor_buffer(uint32_t(t));
        observe(pt.ir_tensor, reinterpret_cast<const float*>(buf.value().data), buf.value().size / 4, &pt);
      }
      if (progress) progress(++runs_done, calibration.size());
    }
  };
  // One pass: the histograms grow to each tensor's range as its values come.
  std::map<int, Histogram> histograms;
  run_samples([&](int t, const float* values, size_t n, const ProgramTensor* pt) {
    observe_range(g.tensors[size_t(t)], values, n);
    if (observer.kind != Observer::kMinMax) histograms.try_emplace(t, kHistogramBins).first->second.add(values, n);
    if (!tap_means || !pt || !tap_means->wants(t) || pt->logical_shape != g.tensors[size_t(t)].shape) return;
    // A flat NHWC view (rank 2) is already in its linear layer's column order (fold_flatten_into_linear).
    if (pt->layout == format::Layout::kPlain || pt->logical_shape.size() < 3) return tap_means->add(t, values);
    const std::vector<uint8_t> logical = physical_to_logical(reinterpret_cast<const uint8_t*>(values),
                                                             pt->logical_shape, pt->layout, 4);
    tap_means->add(t, reinterpret_cast<const float*>(logical.data()));
  });
  for (const Tensor& t : g.tensors) {
    if (!t.constant && !(std::isfinite(t.observed_min) && std::isfinite(t.observed_max)) && t.observed_min <= t.observed_max)
      throw CompileError("tensor " + t.name + " reached NaN or Inf during calibration");
  }
  std::vector<std::string> warnings = degenerate_ranges(g, calibration.size());  // the observed ranges
  for (Tensor& t : g.tensors) t.seen_min = t.observed_min, t.seen_max = t.observed_max;

  std::ostringstream report;
  report << "{\"observer\":" << json_string(observer_name(observer.kind));
  if (observer.kind == Observer::kPercentile)
    report << ",\"percentile\":" << std::setprecision(12) << observer.percentile;
  if (observer.kind != Observer::kMinMax) {
    report << ",\"bins\":" << kHistogramBins << ",\"narrowed\":[";
    const char* sep = "";
    std::vector<std::string> saturated;
    for (const auto& [t, histogram] : histograms) {
      Tensor& tensor = g.tensors[size_t(t)];
      if (!(tensor.observed_min < tensor.observed_max)) continue;
      const Range range = observer_range(histogram, observer);
      if (range.lo == tensor.observed_min && range.hi == tensor.observed_max) continue;
      // Values less than half an int8 step past a limit round to it unclipped: not counted.
      const float half_step = (std::max(range.hi, 0.0f) - std::min(range.lo, 0.0f)) / 510;
      const double share = share_outside(histogram, Range{range.lo - half_step, range.hi + half_step});
      if (share > kSaturatedShare) {
        std::ostringstream item;
        item << tensor.name << ' ' << std::setprecision(3) << 100 * share << '%';
        saturated.push_back(item.str());
      }
      report << sep << "{\"tensor\":" << json_string(tensor.name) << ",\"observed\":["
             << json_float(tensor.observed_min) << ',' << json_float(tensor.observed_max) << "],\"range\":["
             << json_float(range.lo) << ',' << json_float(range.hi) << "]}";
      sep = ",";
      tensor.observed_min = range.lo;
      tensor.observed_max = range.hi;
    }
    report << ']';
    if (!saturated.empty())
      warnings.push_back("calibration: " + std::to_string(saturated.size()) + " activation(s) saturate more than 1% " +
                         "of their calibration values at the int8 limits (" + listed(saturated) +
                         "): the observer clipped too much (a higher percentile, or minmax)");
  }
  if (!warnings.empty()) {
    report << ",\"warnings\":[";
    for (size_t i = 0; i < warnings.size(); ++i) report << (i ? "," : "") << json_string(warnings[i]);
    report << ']';
  }
  report << '}';
  return report.str();
}

void check_options(const CompileOptions& options) {
  find_target(options.target);
  if (options.patches < 1 || options.patches > 64)
    throw CompileError("patches must be a whole number from 1 to 64, got " + std::to_string(options.patches));
  if (options.stream_input && options.patches == 1)
    throw CompileError("stream_input fetches the input rows of patch bands: it needs patches > 1");
  if (!options.layers.empty() && options.precision == Precision::kFloat32)
    throw CompileError("per-layer precisions apply to quantized programs; precision 'fp32' takes none");
  // int16 layers in an int8 program take what an int16 program takes.
  const bool int16_layers = std::any_of(options.layers.begin(), options.layers.end(), [](const LayerPrecision& l) {
    return l.activation_bits == kWideActivationBits;
  });
  const std::string wide_needs = options.precision == Precision::kInt16 ? "precision 'int16' needs" : "int16 layers need";
  // (int16 layers of an int8 program take every calibration value's range: quantizer.h.)
  if (options.observer.kind != Observer::kMinMax && options.precision != Precision::kInt8)
    throw CompileError(std::string("observer '") + observer_name(options.observer.kind) +
                       "' applies to int8 compilation only");
  if ((options.precision == Precision::kInt16 || int16_layers) && options.int8_io)
    throw CompileError("io 'int8' keeps an int8 program's inputs and outputs; " + wide_needs + " io 'float32'");
  if ((options.precision == Precision::kInt16 || int16_layers) && options.patches > 1)
    throw CompileError("patches apply to int8 and fp32 programs; " + wide_needs + " patches 1");
  if (options.weight_bits != kWeightBits && options.precision != Precision::kInt8)
    throw CompileError(std::string("weights 'int4' apply to int8 programs (W4A8); precision '") +
                       precision_name(options.precision) + "' needs weights 'int8'");
  check_observer_options(options.observer);
}

namespace {

const char* const kMixedByTheApi =
    "'mixed' is chosen layer by layer by mcuflow.compile's sensitivity pass; the compiler takes the result as "
    "CompileOptions::layers";

}  // namespace

CompileOptions options_from_names(const std::string& target, const std::string& precision, const std::string& io,
                                  const std::string& fallback, int patches, bool stream_input,
                                  const std::string& observer, double percentile, const std::string& weights) {
  CompileOptions options;
  options.target = target;
  find_target(target);  // the first option named, the first checked
  if (precision == "int8") options.precision = Precision::kInt8;
  else if (precision == "int16") options.precision = Precision::kInt16;
  else if (precision == "fp32") options.precision = Precision::kFloat32;
  else if (precision == "mixed") throw CompileError(kMixedByTheApi);
  else throw CompileError("unknown precision '" + precision + "' (int8, int16, fp32 or mixed)");
  if (io != "float32" && io != "int8") throw CompileError("unknown io '" + io + "' (float32 or int8)");
  options.int8_io = io == "int8";
  options.patches = patches;
  if (fallback != "float" && fallback != "error") throw CompileError("unknown fallback '" + fallback + "' (float or error)");
  options.allow_fallback = fallback == "float";
  options.stream_input = stream_input;
  options.observer = ObserverOptions{parse_observer(observer), percentile};
  if (weights == "mixed") throw CompileError(kMixedByTheApi);
  if (weights != "int8" && weights != "int4") throw CompileError("unknown weights '" + weights + "' (int8, int4 or mixed)");
  options.weight_bits = weights == "int4" ? kInt4WeightBits : kWeightBits;
  check_options(options);
  return options;
}

namespace {

// The graph as quantization sees it: given specs moved back to their producers, then the passes.
void prepare_graph(Graph& g) {
  give_inputs_back(g);
  run_graph_passes(g);
}

}  // namespace

std::vector<PrecisionLayer> model_precision_layers(Graph g) {
  prepare_graph(g);
  return precision_layers(g);
}

std::vector<uint8_t> compile_graph(Graph g, const CompileOptions& options, const Calibration& calibration) {
  check_options(options);
  const Target target = find_target(options.target);
  if (g.inputs.empty()) throw CompileError("the model has no tensor inputs");
  if (g.outputs.empty()) throw CompileError("the model has no outputs");
  prepare_graph(g);
  std::string quantization_report;
  LowerOptions lowering{Precision::kFloat32, false};
  if (options.precision != Precision::kFloat32) {
    // A graph that brings its own quantization (a PT2E model) compiles without calibration data.
    const bool given = std::any_of(g.tensors.begin(), g.tensors.end(),
                                   [](const Tensor& t) { return !t.constant && t.quant.given; });
    if (given && options.precision == Precision::kInt16)
      throw CompileError("the model brings its own (int8) quantization; compile it with precision 'int8'");
    const bool int4_layers = options.weight_bits == kInt4WeightBits ||
                             std::any_of(options.layers.begin(), options.layers.end(),
                                         [](const LayerPrecision& l) { return l.weight_bits == kInt4WeightBits; });
    const bool correct = options.bias_correction == BiasCorrection::kAll ||
                         (options.bias_correction == BiasCorrection::kInt4Weights && int4_layers);
    TapMeans tap_means(g);
    quantization_report = calibration.empty() && given
                              ? R"({"observer":"given"})"
                              : calibrate(g, calibration, options.observer, options.calibration_progress,
                                          correct ? &tap_means : nullptr);
    // Before split_into_patches: the bands copy their tensors' scales.
    assign_quantization(g, options.precision == Precision::kInt16 ? kWideActivationBits : kActivationBits,
                        options.weight_bits, options.layers);
    if (correct) {
      const std::vector<std::string> layers = correct_biases(g, tap_means.means(), options.bias_correction);
      quantization_report.pop_back();  // the object's closing brace
      quantization_report += ",\"bias_corrected\":[";
      for (size_t i = 0; i < layers.size(); ++i) quantization_report += (i ? "," : "") + json_string(layers[i]);
      quantization_report += "]}";
    }
    lowering = LowerOptions{options.precision, options.int8_io, options.allow_fallback, options.weight_bits};
    for (const LayerPrecision& l : options.layers) {
      // Weighted ops say which weights they read whenever any layer may read int4 ones.
      if (l.weight_bits == kInt4WeightBits) lowering.weight_bits = kInt4WeightBits;
      lowering.layer_notes[l.layer] = layer_precision_name(l.activation_bits, l.weight_bits) + (l.why.empty() ? "" : ": " + l.why);
    }
  }
  const auto lower_and_plan = [&](const Graph& ir) {
    LoweredProgram lp = lower(ir, lowering);
    fuse_permutes(lp);
    lp.quantization_report = quantization_report;
    lp.target = target.name;
    lp.tier = target.tier();
    lp.source = options.source;
    select_kernels(lp, target.features);
    if (options.schedule) schedule_ops(lp);
    PlanOptions plan;
    plan.in_place = options.in_place;
    plan.regions = options.regions;
    plan.copy_weights = options.copy_weights;
    drop_self_copies(lp);
    plan_memory(lp, plan);
    return lp;
  };
  LoweredProgram lp = lower_and_plan(g);
  // Bands recompute halo rows: kept only when their plan is smaller. A streamed input changes
  // which stage end the pass estimates best, and the estimate can miss: with stream_input the
  // bands are planned both ways and the smallest plan is kept.
  const auto total = [](const LoweredProgram& p) { return std::accumulate(p.region_bytes.begin(), p.region_bytes.end(), uint64_t{0}); };
  for (const bool stream : {false, true}) {
    if (options.patches == 1 || (stream && !options.stream_input)) continue;
    Graph banded = g;
    split_into_patches(banded, options.patches, lowering.precision == Precision::kInt8 ? 1 : 4, stream);
    LoweredProgram patched = lower_and_plan(banded);
    if (total(patched) < total(lp)) lp = std::move(patched);
  }
  std::vector<uint8_t> bytes = serialize(lp);
  load_compiled(lp, bytes, precision_name(lowering.precision));
  return bytes;
}

}  // namespace mcuflow::compiler
