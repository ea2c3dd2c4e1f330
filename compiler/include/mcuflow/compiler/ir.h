// The compiler's graph IR: typed tensors and ops over PyTorch's logical shapes. Passes rewrite
// it in place; lowering turns it into a program (lowered.h).
#pragma once
#include <cstdint>
#include <limits>
#include <map>
#include <stdexcept>
#include <string>
#include <variant>
#include <vector>

namespace mcuflow::compiler {

// A user-facing compile error: one line, naming the op and its model source line.
class CompileError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

using Shape = std::vector<int64_t>;
using AttrValue = std::variant<int64_t, double, std::vector<int64_t>>;

// A tensor's quantization spec (docs/quantization.md "Quantization specs"): its elements are
// signed `bits`-bit integers q with real value scale * (q - zero_point). Per tensor, `scale` and
// `zero_point` hold it; per axis (axis >= 0), index i along logical dim `axis` has its own
// scales[i] and zero_points[i]. A symmetric spec has zero points 0 and integers within
// ±(2^(bits-1) - 1), so that negating a value never overflows (weights). The scales of tensors
// up to 16 bits are float32 values, as the program stores activation scales; a bias's scales
// are products of two of them (input scale × weight scale), exact in double.
struct Quant {
  bool valid = false;
  float scale = 0.0f;
  int32_t zero_point = 0;
  int bits = 8;                 // 4, 8, 16 (activations, weights), 32 or 48 (biases; 48: stored as int64)
  bool symmetric = false;
  int axis = -1;                // the logical dim of per-axis scales, -1 per tensor
  std::vector<double> scales;   // per axis
  std::vector<int32_t> zero_points;
  bool given = false;           // from the front end (a pre-quantized model): kept, never calibrated

  bool per_axis() const { return axis >= 0; }
  // The range of the element type, and of the integers this spec produces (symmetric: narrower).
  int64_t type_min() const { return -(int64_t{1} << (bits - 1)); }
  int64_t type_max() const { return (int64_t{1} << (bits - 1)) - 1; }
  int64_t q_min() const { return symmetric ? -type_max() : type_min(); }
  int64_t q_max() const { return type_max(); }
  double scale_at(size_t i) const { return per_axis() ? scales[i] : double(scale); }
  int32_t zero_point_at(size_t i) const { return per_axis() ? zero_points[i] : zero_point; }
  bool operator==(const Quant& o) const;
  bool operator!=(const Quant& o) const { return !(*this == o); }
};

// What a tensor's elements are, whatever the program's precision: real values (float32, or
// quantized), a mask of 0/1 bytes (a comparison's result: int8 with scale 1 and zero point 0,
// never calibrated), or int32 ids (an integer model input, e.g. token ids for an embedding).
enum class Element { kReal, kMask, kIds };

struct Tensor {
  std::string name;
  Shape shape;                    // logical (PyTorch) order
  Element element = Element::kReal;
  bool constant = false;
  std::vector<float> data;        // constant values in logical order
  // Physical layout: rank-4 activations are stored NHWC on device, and so are (N, C, L) model
  // inputs and outputs read and written only through their row views (N, L, C: channels last).
  // A "flat NHWC" tensor is a rank-2 view whose bytes are an NHWC tensor's bytes (flatten
  // folded into a linear layer).
  bool nhwc = false;
  float observed_min = std::numeric_limits<float>::infinity();
  float observed_max = -std::numeric_limits<float>::infinity();
  // Every calibration value's range, before an observer narrowed observed_* (int16 specs take it).
  float seen_min = std::numeric_limits<float>::infinity();
  float seen_max = -std::numeric_limits<float>::infinity();
  Quant quant;

  int64_t numel() const;
};

struct Op {
  std::string kind;               // the front-end vocabulary (docs/frontend_contract.md)
  std::vector<int> inputs, outputs;
  std::map<std::string, AttrValue> attrs;
  std::string source;             // model source line, for messages
  float act_min = -std::numeric_limits<float>::infinity();  // fused activation bounds
  float act_max = std::numeric_limits<float>::infinity();

  int64_t int_attr(const std::string& name) const;
  double float_attr(const std::string& name) const;
  const std::vector<int64_t>& ints_attr(const std::string& name) const;
  bool has_attr(const std::string& name) const { return attrs.count(name) != 0; }
  std::string where() const;      // "<kind> at <source>"
};

// A tensor the program keeps between runs (a module buffer that forward updates): ops read
// `tensor` as the value the previous run left (before the first run, `initial`, in logical
// order), and `update` is the value this run leaves for the next. `tensor` is no graph input
// and no op writes it.
// A ring state (stream_convs) holds the last frames of a streaming convolution's input along
// its time axis: `update` is then the frames a run appends, and the convolution reading it
// (attr "ring_state") keeps it (docs/streaming.md).
struct StateTensor {
  int tensor = -1, update = -1;
  std::vector<float> initial;
  bool ring = false;
};

struct Graph {
  std::vector<Tensor> tensors;
  std::vector<Op> ops;            // in a valid execution order
  std::vector<int> inputs, outputs;
  std::vector<StateTensor> states;

  int add_tensor(Tensor t);
  int add_constant(const std::string& name, Shape shape, std::vector<float> data);
  std::vector<int> consumers(int tensor) const;        // indices of ops reading `tensor`
  int producer(int tensor) const;                      // op index writing `tensor`, or -1
  bool is_graph_output(int tensor) const;              // a graph output or a state's update: read after the run
  void replace_uses(int old_tensor, int new_tensor);   // in ops, graph outputs and state updates
};

// Output shapes of an op from its inputs and attrs; throws CompileError for unsupported
// attributes or inconsistent shapes.
std::vector<Shape> infer_shapes(const Graph& g, const Op& op);

std::string shape_str(const Shape& s);

// Flat index into `in` (broadcast against `out` by NumPy's rules) of the element at flat
// `index` of `out`; both in logical row-major order.
int64_t broadcast_index(const Shape& out, const Shape& in, int64_t index);

}  // namespace mcuflow::compiler
