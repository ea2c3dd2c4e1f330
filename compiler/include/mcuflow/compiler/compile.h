// The compiler pipeline: graph passes → calibration → quantization → lowering → planning →
// serialization.
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "mcuflow/compiler/ir.h"
#include "mcuflow/compiler/kernel_selection.h"
#include "mcuflow/compiler/lower.h"
#include "mcuflow/compiler/planner.h"
#include "mcuflow/compiler/quantizer.h"

namespace mcuflow::compiler {

// Told how far calibration is: sample runs done and in all (an observer other than min/max runs
// every sample twice). Called after every sample, on the compiling thread: it must be cheap.
using CalibrationProgress = std::function<void(size_t done, size_t total)>;

struct CompileOptions {
  std::string target = "cortex-m55";
  Precision precision = Precision::kInt8;
  int weight_bits = kWeightBits;  // 4: packed int4 weights (W4A8) where an int4 kernel takes the op
  bool int8_io = false;
  bool allow_fallback = true;  // int8: ops without a usable int8 kernel run in float32 (else an error)
  bool schedule = true;  // reorder ops for the smallest memory peak (planner.h schedule_ops)
  bool in_place = true;  // ops may overwrite dying inputs (planner.h plan_memory)
  int patches = 1;       // > 1: the early convolutions run in this many bands (passes.h split_into_patches)
  bool stream_input = false;  // with patches: the bands fetch their input rows (Session::run's InputReader)
  std::vector<MemoryRegion> regions;  // RAM regions, fastest first (planner.h); empty: one arena
  bool copy_weights = false;          // weights live in slow memory: copy the costliest to fast RAM
  ObserverOptions observer;           // int8: how calibration picks each activation's range
  BiasCorrection bias_correction = BiasCorrection::kInt4Weights;  // quantizer.h correct_biases
  // Per-layer widths overriding `precision` and `weight_bits` for the layers they name
  // (quantizer.h; chosen by the Python API's sensitivity pass for precision or weights "mixed").
  std::vector<LayerPrecision> layers;
  std::map<std::string, std::string> source;  // provenance copied into the metadata
  CalibrationProgress calibration_progress;    // empty: none
};

// samples × model inputs × values in PyTorch's logical order
using Calibration = std::vector<std::vector<std::vector<float>>>;

struct Target {
  std::string name;
  CoreFeatures features;  // what its kernels may use (kernel_selection.h)
  std::string tier() const { return tier_name(features); }
};
Target find_target(const std::string& name);  // throws CompileError listing known targets

// The one check of every compile option, on its own and together (the target, patches,
// stream_input, the observer's percentile): CompileError naming the first bad one. compile_graph
// runs it first; the Python API runs it through options_from_names before it looks at a model.
void check_options(const CompileOptions& options);

// The options the Python API and tools name by string ("int8" / "fp32", "float32" / "int8",
// "float" / "error", an observer name, weights "int8" / "int4"), parsed and checked with check_options.
CompileOptions options_from_names(const std::string& target, const std::string& precision, const std::string& io,
                                  const std::string& fallback, int patches, bool stream_input,
                                  const std::string& observer, double percentile, const std::string& weights = "int8");

std::vector<uint8_t> compile_graph(Graph g, const CompileOptions& options, const Calibration& calibration);

// The layers of `g` whose precision CompileOptions::layers may choose, after the graph passes
// compile_graph runs (which fuse activations into the ops whose outputs name the layers).
std::vector<PrecisionLayer> model_precision_layers(Graph g);

// Runs the float32 lowering of `g` (passes already applied) over the calibration samples and
// widens every activation's observed range. Any observer but min/max then runs the samples
// again into a histogram per tensor over that range and narrows the range to its choice.
// Returns the metadata's "quantization" JSON object: the observer and every narrowed range.
// `tap_means`, if given (made for `g`), takes every sample's values (bias correction's data).
std::string calibrate(Graph& g, const Calibration& calibration, const ObserverOptions& observer = {},
                      const CalibrationProgress& progress = {}, TapMeans* tap_means = nullptr);

}  // namespace mcuflow::compiler
