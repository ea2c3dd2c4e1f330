// Post-training quantization: activation ranges observed on calibration data become per-tensor
// asymmetric int8 parameters (docs/quantization.md "Integer arithmetic"; docs/quantization.md).
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "mcuflow/compiler/ir.h"

namespace mcuflow::compiler {

// Widens `t`'s observed range with `n` calibration values.
void observe_range(Tensor& t, const float* values, size_t n);

// The element widths the quantizer gives: activations and weights, and int32 biases. An int16
// program's int16 activations (A16W8) have int8 weights too, and int64 biases whose values the
// int16 kernels' accumulator bounds to 48 bits (|bias| < 2^47).
constexpr int kActivationBits = 8;
constexpr int kWideActivationBits = 16;
constexpr int kWeightBits = 8;
// weights="int4" (W4A8): symmetric per output channel in [-7, 7], packed two a byte; the int8
// activations and int32 biases stay (docs/quantization.md "int4 weights").
constexpr int kInt4WeightBits = 4;
constexpr int kBiasBits = 32;
constexpr int kWideBiasBits = 48;

// A mask's quantization: its 0/1 bytes are its real values (scale 1, zero point 0).
Quant mask_quant();

// Asymmetric `bits`-bit quantization covering [lo, hi] ∪ {0} in 2^bits - 1 steps.
Quant quant_for_range(float lo, float hi, int bits = kActivationBits);

// Symmetric `bits`-bit quantization (zero point 0) covering [-m, m], m = max(|lo|, |hi|), in
// 2^bits - 2 steps: the int16 activations of TFLite's 16x8 scheme.
Quant symmetric_range_quant(float lo, float hi, int bits);

// Symmetric `bits`-bit quantization of constant `t` by its largest magnitude, per tensor
// (axis -1) or per index along logical dim `axis`; an all-zero group gets scale 1. Below 8 bits
// (int4 weights) each group's scale is the one of least squared error, clipping up to half the
// largest magnitude.
Quant symmetric_quant(const Tensor& t, int axis, int bits);

// The spec of a bias added to products of `input` and `weight` (int32 for int8 inputs, 48-bit
// for int16 ones): per output channel, scale input scale × weight scale (exact in double),
// zero point 0.
Quant bias_quant(const Quant& input, const Quant& weight, int64_t channels);

// `values`, a tensor of logical `shape` (row-major; only read for per-axis specs), as the
// integers of `q`: rounded half away from zero, clamped to [q_min, q_max].
std::vector<int64_t> quantize_values(const std::vector<float>& values, const Quant& q, const Shape& shape = {});

// The index along `axis` of each flat row-major index of a tensor of `shape` (0 if axis < 0).
class AxisWalk {
 public:
  AxisWalk(const Shape& shape, int axis);
  size_t index(size_t flat) const { return (flat / inner_) % size_; }

 private:
  size_t size_ = 1, inner_ = 1;
};

// One op whose precision a program may choose for it alone: it writes activations of a spec of
// its own and an int16 kernel takes it, or an int4-weight kernel takes its weights. Named by the
// IR tensor it writes (`layer`), as the per-layer choices and the program's metadata name it.
struct PrecisionLayer {
  std::string layer, kind, source;
  bool int16 = false;  // may read and write int16 activations (with int8 weights)
  bool int4 = false;   // may read int4 weights (with int8 activations)
};
std::vector<PrecisionLayer> precision_layers(const Graph& g);

// The choice for one layer: its activation and weight widths and why they were chosen (the
// sensitivity pass's measurement, shown by mcuflow inspect). int16 activations take int8 weights.
struct LayerPrecision {
  std::string layer;
  int activation_bits = kActivationBits;
  int weight_bits = kWeightBits;
  std::string why;
};

// Gives every tensor its quantization spec, in execution order. Activations: ops that must
// keep their input's quantization (pooling, views, standalone clamps) inherit it; softmax
// outputs get 1/2^bits and the lowest integer; the rest come from their observed ranges.
// Constants the int8 kernels read as integers get theirs (weights, biases, constant
// operands). A spec the front end gave (Quant::given) is kept as it is.
// activation_bits 16 (an int16 program): the ops whose int16 kernels take them (OpDef::int16)
// read and write symmetric int16 activations, the others int8 ones; where a tensor's width is
// not the one its reader takes, a "requantize" op is inserted before the reader, converting it
// to a tensor of the reader's width over the same observed range. Graph inputs are int16;
// states (and the ops writing their updates) stay int8.
// weight_bits 4: the weights of the ops an int4-weight kernel takes (OpDef::int4) get symmetric
// int4 specs per output channel (dim 0), linear layers' too; other weights stay int8.
// layers: per-layer choices overriding both widths for the ops they name (precision or weights
// "mixed"); a CompileError names a layer that is no op's, or a width its op has no kernel for.
void assign_quantization(Graph& g, int activation_bits = kActivationBits, int weight_bits = kWeightBits,
                         const std::vector<LayerPrecision>& layers = {});

// Bias correction's data: for each weighted op (conv2d, linear), the calibration mean of what each
// of its weights multiplies, per input channel and kernel tap over the output positions (conv2d:
// (C, kh, kw), padding counting as 0; linear: per input feature), keyed by the op's output tensor.
class TapMeans {
 public:
  explicit TapMeans(const Graph& g);  // the conv2d (but streaming ones) and linear ops of g
  bool wants(int tensor) const;       // some such op reads it
  // One sample's values of `tensor`, in logical order.
  void add(int tensor, const float* values);
  std::map<int, std::vector<double>> means() const;

 private:
  struct Reader {
    int op = -1;      // index in the graph as calibration runs it
    int output = -1;  // the op's output tensor: its key once later passes move ops
    std::vector<double> sums;
    uint64_t count = 0;  // output positions summed over (per tap)
  };
  const Graph& g_;
  std::map<int, std::vector<Reader>> readers_;  // by input tensor
};

// Which weighted ops bias correction applies to. By default those with int4 weights: on the
// trained models of bench/observers_trained.py it lifts W4A8 output SNR by 0.7 to 9.6 dB (166 -> 95
// of 7,350 top-1 differ from float), while int8 weights gain 0.0 to 3.8 dB and their top-1 agreement
// stays within noise (31 -> 32 differ; docs/quantization.md "Bias correction").
enum class BiasCorrection { kOff, kInt4Weights, kAll };
BiasCorrection parse_bias_correction(const std::string& name);  // "off", "int4", "all"

// Bias correction (after assign_quantization): rounding a weighted op's weights shifts the mean
// of its output channel o by sum over its taps k of (deq(q(W)) - W)[o, k] * E[x_k]; the op's bias
// absorbs that shift (a bias is added where it had none). Weights with a given spec (a PT2E model)
// are kept as they came. Returns the corrected layers (their output tensors' names).
std::vector<std::string> correct_biases(Graph& g, const std::map<int, std::vector<double>>& tap_means,
                                        BiasCorrection which);

// A spec the front end gave to the output of an op that keeps its input's (a view, a pool) is its
// input's too: it flows back to the producer (a Conv1d sent as reshape, conv2d, reshape). Runs
// before the graph passes, which may drop the view that carried it.
void give_inputs_back(Graph& g);

// How calibration turns a tensor's observed values into its quantization range.
enum class Observer {
  kMinMax,      // the observed minimum and maximum
  kPercentile,  // each side clipped so that (100 - percentile)% of the values lie beyond it
  kMse,         // the range whose int8 quantization has the least mean squared error on the values
  kEntropy,     // the range whose int8 quantization keeps the values' distribution closest (least
                // Kullback-Leibler divergence of the quantized histogram from the clipped one)
};

struct ObserverOptions {
  Observer kind = Observer::kMinMax;
  double percentile = 99.99;  // kPercentile: in (50, 100]; 100 is the min/max range
};

// Histogram bins per tensor: over the observed range a bin is at most a quarter of an int8 step.
constexpr int kHistogramBins = 2048;

Observer parse_observer(const std::string& name);  // throws CompileError naming the choices
const char* observer_name(Observer kind);
// Throws CompileError when a percentile observer's percentile is out of range.
void check_observer_options(const ObserverOptions& options);

struct Range {
  float lo, hi;
};

// Counts of one tensor's values in equal bins over [lo, hi]. Values beyond the range grow it: every
// bin's width doubles (neighbouring bins merge) until they fit, so one calibration pass fills the
// histogram whatever order the values come in, with at least half the bins over the values.
class Histogram {
 public:
  Histogram(float lo, float hi, int bins);  // lo < hi, bins even
  explicit Histogram(int bins);             // empty: the first values set the range
  void add(const float* values, size_t n);  // ignores NaN and Inf (calibration refuses them)
  float lo() const { return float(lo_); }
  float hi() const { return float(hi_); }
  float min() const { return min_; }        // the smallest and largest value added
  float max() const { return max_; }
  const std::vector<uint64_t>& counts() const { return counts_; }
  float edge(size_t i) const;  // left edge of bin i; edge(bins) is hi exactly

 private:
  void cover(double lo, double hi);
  double lo_ = 0, hi_ = 0;  // equal until a range is set
  float min_, max_;
  std::vector<uint64_t> counts_;
};

// [the (100 - percentile)th, the percentile-th] percentile of the values, interpolated linearly
// inside a bin; percentile 100 gives exactly [lo, hi]. A side on which the values do not cross
// zero (lo >= 0, hi <= 0) stays as observed.
Range percentile_range(const Histogram& h, double percentile);

// The bin-edge range [a, b] (a ≤ 0 or the lowest edge, b ≥ 0 or the highest) minimizing the
// squared error of quantizing the values to 255 steps over [a, b] ∪ {0}: values inside cost
// step²/12 each (uniform rounding error), values outside their squared distance to the clip
// (each bin's values spread uniformly over it). Ties keep the wider range.
Range mse_range(const Histogram& h);

// The range, among the observed range shrunk towards zero by one factor on both sides (down to
// 256 bins), whose int8 quantization of the values clipped to it loses the least information:
// least KL divergence of the quantized histogram from the clipped one. Ties keep the wider range.
Range entropy_range(const Histogram& h);

// The range `options` choose for a histogram, inside its values' [min, max] (kMinMax: that range).
Range observer_range(const Histogram& h, const ObserverOptions& options);

}  // namespace mcuflow::compiler
