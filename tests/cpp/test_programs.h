// Shared helpers of the runtime and compiler tests: build small graphs by hand through the C++
// compiler API (the front-end vocabulary of docs/frontend_contract.md), compile them to .mfp
// bytes, hold program bytes and arenas in exactly sized 16-byte-aligned allocations (so ASan
// sees every read past their end), poke at the records of a serialized program, and run one.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <new>
#include <stdexcept>
#include <ostream>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "mcuflow/compiler/compile.h"
#include "mcuflow/compiler/ir.h"
#include "mcuflow/compiler/layout.h"
#include "mcuflow/compiler/op_registry.h"
#include "mcuflow/runtime/format.h"
#include "mcuflow/runtime/runtime.h"

#if defined(__SANITIZE_ADDRESS__)
#define MCUFLOW_TEST_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define MCUFLOW_TEST_ASAN 1
#endif
#endif
#ifdef MCUFLOW_TEST_ASAN
#include <sanitizer/asan_interface.h>
#endif

namespace mcuflow {
// gtest prints Error values by name.
inline void PrintTo(Error e, std::ostream* os) { *os << error_name(e); }
}  // namespace mcuflow

namespace mcuflow::tp {

using compiler::AttrValue;
using compiler::Calibration;
using compiler::CompileOptions;
using compiler::Graph;
using compiler::Op;
using compiler::Precision;
using compiler::Shape;
using compiler::Tensor;

// ---------------------------------------------------------------------------------------------
// Random numbers

class Rng {
 public:
  explicit Rng(uint32_t seed) : gen_(seed) {}
  int uniform_int(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(gen_); }
  double uniform(double lo, double hi) { return std::uniform_real_distribution<double>(lo, hi)(gen_); }
  bool coin(double p = 0.5) { return uniform(0.0, 1.0) < p; }
  std::vector<float> floats(size_t n, double lo, double hi) {
    std::vector<float> v(n);
    for (auto& x : v) x = static_cast<float>(uniform(lo, hi));
    return v;
  }
  std::mt19937& engine() { return gen_; }

 private:
  std::mt19937 gen_;
};

inline int64_t numel(const Shape& s) {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  return n;
}

// ---------------------------------------------------------------------------------------------
// Building graphs the way the Python front end does (GraphBuilder: add_input, add_constant,
// add_op with shape inference, set_outputs).

class Builder {
 public:
  Graph g;

  int input(const std::string& name, Shape shape) {
    Tensor t;
    t.name = name;
    t.shape = std::move(shape);
    const int id = g.add_tensor(std::move(t));
    g.inputs.push_back(id);
    return id;
  }
  int constant(const std::string& name, Shape shape, std::vector<float> values) {
    return g.add_constant(name, std::move(shape), std::move(values));
  }
  int random_constant(const std::string& name, Shape shape, Rng& rng, double lo = -1.0, double hi = 1.0) {
    const size_t n = size_t(numel(shape));
    return constant(name, std::move(shape), rng.floats(n, lo, hi));
  }
  // Appends an op, infers its output shape, returns the output tensor id.
  int op(const std::string& kind, std::vector<int> inputs, std::map<std::string, AttrValue> attrs = {},
         const std::string& source = "") {
    Op o;
    o.kind = kind;
    o.inputs = std::move(inputs);
    o.attrs = std::move(attrs);
    o.source = source.empty() ? "model.py:" + std::to_string(10 + g.ops.size()) + ": " + kind : source;
    const std::vector<Shape> shapes = compiler::infer_shapes(g, o);
    Tensor y;
    y.name = kind + "_" + std::to_string(g.ops.size());
    y.shape = shapes.at(0);
    y.element = compiler::output_element(g, o);
    o.outputs.push_back(g.add_tensor(std::move(y)));
    g.ops.push_back(std::move(o));
    return g.ops.back().outputs[0];
  }
  void outputs(std::vector<int> ids) { g.outputs = std::move(ids); }

  // Common ops with the attrs the front end passes.
  int conv(int x, int w, int b, int64_t stride = 1, int64_t pad = 0, int64_t groups = 1, int64_t dil = 1) {
    std::vector<int> in = {x, w};
    if (b >= 0) in.push_back(b);
    return op("conv2d", in,
              {{"stride", std::vector<int64_t>{stride, stride}},
               {"padding", std::vector<int64_t>{pad, pad}},
               {"dilation", std::vector<int64_t>{dil, dil}},
               {"groups", groups}});
  }
  int linear(int x, int w, int b) {
    std::vector<int> in = {x, w};
    if (b >= 0) in.push_back(b);
    return op("linear", in);
  }
  int relu(int x) { return op("relu", {x}); }
  int clamp(int x, double lo, double hi) { return op("clamp", {x}, {{"min", lo}, {"max", hi}}); }
  int max_pool(int x, int64_t k, int64_t s, int64_t pad = 0) {
    return op("max_pool2d", {x},
              {{"kernel", std::vector<int64_t>{k, k}},
               {"stride", std::vector<int64_t>{s, s}},
               {"padding", std::vector<int64_t>{pad, pad}},
               {"dilation", std::vector<int64_t>{1, 1}},
               {"ceil_mode", int64_t(0)}});
  }
  int avg_pool(int x, int64_t k, int64_t s, int64_t pad = 0) {
    return op("avg_pool2d", {x},
              {{"kernel", std::vector<int64_t>{k, k}},
               {"stride", std::vector<int64_t>{s, s}},
               {"padding", std::vector<int64_t>{pad, pad}},
               {"ceil_mode", int64_t(0)},
               {"count_include_pad", int64_t(0)}});
  }
  int reshape(int x, std::vector<int64_t> shape) { return op("reshape", {x}, {{"shape", std::move(shape)}}); }
  int permute(int x, std::vector<int64_t> perm) { return op("permute", {x}, {{"perm", std::move(perm)}}); }
  int softmax(int x, int64_t dim = -1) { return op("softmax", {x}, {{"dim", dim}}); }
  int mean_hw(int x, bool keepdim) {
    return op("mean", {x}, {{"dims", std::vector<int64_t>{2, 3}}, {"keepdim", int64_t(keepdim ? 1 : 0)}});
  }
  int cat(std::vector<int> xs, int64_t dim) { return op("cat", std::move(xs), {{"dim", dim}}); }
  int batch_norm(int x, int w, int b, int mean, int var, double eps = 1e-5) {
    return op("batch_norm", {x, w, b, mean, var}, {{"eps", eps}});
  }
};

// samples x inputs x values (logical order), uniform in [lo, hi].
inline Calibration random_calibration(const Graph& g, int samples, uint32_t seed, double lo = -1.0, double hi = 1.0) {
  Rng rng(seed);
  Calibration c;
  for (int s = 0; s < samples; ++s) {
    std::vector<std::vector<float>> sample;
    for (int t : g.inputs) sample.push_back(rng.floats(size_t(g.tensors[t].numel()), lo, hi));
    c.push_back(std::move(sample));
  }
  return c;
}

// Compiled for the reference target by default, so every op keeps its reference kernel (tests
// that look for a kernel id find it); pass a core (cortex-m0, -m4, -m55 …) to get its tier's
// kernels selected.
constexpr const char* kReferenceTarget = "reference";

inline std::vector<uint8_t> compile_int8(const Graph& g, uint32_t seed = 1, int samples = 8, bool int8_io = false,
                                         const std::string& target = kReferenceTarget) {
  CompileOptions o;
  o.target = target;
  o.precision = Precision::kInt8;
  o.int8_io = int8_io;
  return compiler::compile_graph(g, o, random_calibration(g, samples, seed));
}

inline std::vector<uint8_t> compile_fp32(const Graph& g, const std::string& target = kReferenceTarget) {
  CompileOptions o;
  o.target = target;
  o.precision = Precision::kFloat32;
  return compiler::compile_graph(g, o, {});
}

// ---------------------------------------------------------------------------------------------
// Small models

// input [1, 8] -> linear(8 -> 4) -> output: the smallest useful program (byte-flip sweeps).
inline Graph tiny_graph(uint32_t seed = 7) {
  Rng rng(seed);
  Builder b;
  const int x = b.input("x", {1, 8});
  const int w = b.random_constant("fc.weight", {4, 8}, rng);
  const int bias = b.random_constant("fc.bias", {4}, rng, -0.1, 0.1);
  b.outputs({b.linear(x, w, bias)});
  return b.g;
}

// input [1, 3, 8, 8] -> conv 3x3 (4 channels, pad 1) -> relu -> max_pool 2 -> flatten -> linear(64 -> 5)
inline Graph conv_relu_pool_linear_graph(uint32_t seed = 11) {
  Rng rng(seed);
  Builder b;
  const int x = b.input("x", {1, 3, 8, 8});
  const int w = b.random_constant("conv.weight", {4, 3, 3, 3}, rng, -0.5, 0.5);
  const int cb = b.random_constant("conv.bias", {4}, rng, -0.1, 0.1);
  int y = b.conv(x, w, cb, 1, 1);
  y = b.relu(y);
  y = b.max_pool(y, 2, 2);
  y = b.reshape(y, {1, -1});
  const int fw = b.random_constant("fc.weight", {5, 64}, rng, -0.3, 0.3);
  const int fb = b.random_constant("fc.bias", {5}, rng, -0.1, 0.1);
  b.outputs({b.linear(y, fw, fb)});
  return b.g;
}

// Exercises most kernels: conv, depthwise conv, add, mul (per-channel), avg/max pool, cat, mean,
// linear, softmax, a standalone clamp and an NHWC -> NCHW permute (flatten not into a linear).
inline Graph mixed_graph(uint32_t seed = 23) {
  Rng rng(seed);
  Builder b;
  const int x = b.input("x", {1, 4, 6, 6});
  const int w1 = b.random_constant("c1.weight", {8, 4, 3, 3}, rng, -0.4, 0.4);
  const int b1 = b.random_constant("c1.bias", {8}, rng, -0.1, 0.1);
  const int c1 = b.relu(b.conv(x, w1, b1, 1, 1));
  const int wd = b.random_constant("dw.weight", {8, 1, 3, 3}, rng, -0.5, 0.5);
  const int d = b.clamp(b.conv(c1, wd, -1, 1, 1, 8), -1.0, 1.0);
  const int s = b.op("add", {c1, d});
  const int scale = b.random_constant("scale", {1, 8, 1, 1}, rng, 0.5, 1.5);
  const int m = b.op("mul", {s, scale});
  const int p = b.avg_pool(m, 2, 2);
  const int q = b.max_pool(c1, 2, 2);
  const int qc = b.clamp(q, 0.0, 0.8);  // standalone clamp (pool output is not fusable)
  const int cat = b.cat({p, qc}, 1);
  const int g = b.mean_hw(cat, false);
  const int fw = b.random_constant("fc.weight", {10, 16}, rng, -0.5, 0.5);
  const int fb = b.random_constant("fc.bias", {10}, rng, -0.1, 0.1);
  const int sm = b.softmax(b.linear(g, fw, fb));
  const int flat = b.reshape(q, {1, 72});  // NHWC -> logical order: a permute kernel
  b.outputs({sm, flat});
  return b.g;
}

// The operator-coverage vocabulary: pad, a LUT activation, maximum, sub, nearest upsampling, a
// transposed conv, sum over dims, slice, matmul of two activations, layer norm (float fallback in
// int8 programs) and an argmax output (int32).
inline Graph extended_graph(uint32_t seed = 29) {
  Rng rng(seed);
  Builder b;
  const int x = b.input("x", {1, 4, 6, 6});
  const int p = b.op("pad", {x}, {{"pad", std::vector<int64_t>{1, 1, 1, 1}}, {"value", 0.0}});
  const int c = b.conv(p, b.random_constant("w", {4, 4, 3, 3}, rng, -0.4, 0.4), -1);
  const int d = b.op("sub", {b.op("maximum", {b.op("sigmoid", {c}), x}), x});
  const int u = b.op("upsample_nearest2d", {d}, {{"scale", std::vector<int64_t>{2, 2}}});
  const int t = b.op("conv_transpose2d", {x, b.random_constant("wt", {4, 2, 2, 2}, rng, -0.5, 0.5)},
                     {{"stride", std::vector<int64_t>{2, 2}},
                      {"padding", std::vector<int64_t>{0, 0}},
                      {"output_padding", std::vector<int64_t>{0, 0}},
                      {"dilation", std::vector<int64_t>{1, 1}},
                      {"groups", int64_t(1)}});
  const int r = b.op("sum", {b.cat({u, t}, 1)}, {{"dims", std::vector<int64_t>{2, 3}}, {"keepdim", int64_t(0)}});
  const int sl = b.op("slice", {r}, {{"dim", int64_t(1)}, {"start", int64_t(0)}, {"end", int64_t(4)}, {"step", int64_t(1)}});
  const int mm = b.op("matmul", {b.reshape(b.mean_hw(x, false), {1, 4, 1}), b.reshape(sl, {1, 1, 4})});
  const int ln = b.op("layer_norm", {mm, b.random_constant("lw", {4}, rng, 0.5, 1.5), b.random_constant("lb", {4}, rng)},
                      {{"eps", 1e-5}});
  const int am = b.op("argmax", {r}, {{"dim", int64_t(1)}, {"keepdim", int64_t(0)}});
  b.outputs({ln, am});
  return b.g;
}

// ---------------------------------------------------------------------------------------------
// Memory: exactly sized, 16-byte-aligned, so ASan reports any access past the end.

class AlignedBytes {
 public:
  AlignedBytes() = default;
  explicit AlignedBytes(size_t n) : n_(n) {
    p_ = static_cast<uint8_t*>(::operator new(n == 0 ? 0 : n, std::align_val_t(16)));
    if (n) std::memset(p_, 0, n);
  }
  AlignedBytes(const uint8_t* data, size_t n) : AlignedBytes(n) {
    if (n) std::memcpy(p_, data, n);
  }
  explicit AlignedBytes(const std::vector<uint8_t>& v) : AlignedBytes(v.data(), v.size()) {}
  AlignedBytes(const AlignedBytes&) = delete;
  AlignedBytes& operator=(const AlignedBytes&) = delete;
  AlignedBytes(AlignedBytes&& o) noexcept : p_(std::exchange(o.p_, nullptr)), n_(std::exchange(o.n_, 0)) {}
  AlignedBytes& operator=(AlignedBytes&& o) noexcept {
    if (this != &o) {
      release();
      p_ = std::exchange(o.p_, nullptr);
      n_ = std::exchange(o.n_, 0);
    }
    return *this;
  }
  ~AlignedBytes() { release(); }

  uint8_t* data() const { return p_; }
  size_t size() const { return n_; }
  Span<const uint8_t> cspan() const { return Span<const uint8_t>{p_, uint32_t(n_)}; }
  Span<uint8_t> span() const { return Span<uint8_t>{p_, uint32_t(n_)}; }

 private:
  void release() {
    if (p_) ::operator delete(p_, std::align_val_t(16));
    p_ = nullptr;
  }
  uint8_t* p_ = nullptr;
  size_t n_ = 0;
};

// An arena of exactly `n` bytes between two guard zones. Under ASan the guards are poisoned
// (any access aborts); otherwise they hold a pattern that guards_intact() checks.
class GuardedArena {
 public:
  static constexpr size_t kGuard = 64;
  static constexpr uint8_t kPattern = 0xA5;
  explicit GuardedArena(size_t n) : n_(n), storage_(n + 2 * kGuard) {
    std::memset(storage_.data(), kPattern, storage_.size());
    std::memset(data(), 0, n_);
#ifdef MCUFLOW_TEST_ASAN
    ASAN_POISON_MEMORY_REGION(storage_.data(), kGuard);
    ASAN_POISON_MEMORY_REGION(data() + n_, kGuard);
#endif
  }
  ~GuardedArena() {
#ifdef MCUFLOW_TEST_ASAN
    ASAN_UNPOISON_MEMORY_REGION(storage_.data(), storage_.size());
#endif
  }
  GuardedArena(const GuardedArena&) = delete;
  GuardedArena& operator=(const GuardedArena&) = delete;
  uint8_t* data() const { return storage_.data() + kGuard; }
  size_t size() const { return n_; }
  Span<uint8_t> span() const { return Span<uint8_t>{data(), uint32_t(n_)}; }
  bool guards_intact() const {
#ifdef MCUFLOW_TEST_ASAN
    ASAN_UNPOISON_MEMORY_REGION(storage_.data(), storage_.size());
#endif
    bool ok = true;
    for (size_t i = 0; i < kGuard; ++i) ok = ok && storage_.data()[i] == kPattern && data()[n_ + i] == kPattern;
#ifdef MCUFLOW_TEST_ASAN
    ASAN_POISON_MEMORY_REGION(storage_.data(), kGuard);
    ASAN_POISON_MEMORY_REGION(data() + n_, kGuard);
#endif
    return ok;
  }

 private:
  size_t n_;
  AlignedBytes storage_;
};

// ---------------------------------------------------------------------------------------------
// The records of a serialized program (mutable, for corruption tests).

inline format::Header& header(uint8_t* file) { return *reinterpret_cast<format::Header*>(file); }
inline format::TensorRecord& tensor_record(uint8_t* file, uint32_t i) {
  return reinterpret_cast<format::TensorRecord*>(file + header(file).tensors_offset)[i];
}
inline format::OpRecord& op_record(uint8_t* file, uint32_t i) {
  return reinterpret_cast<format::OpRecord*>(file + header(file).ops_offset)[i];
}
inline uint16_t* io_table(uint8_t* file) { return reinterpret_cast<uint16_t*>(file + header(file).io_offset); }
inline uint8_t* op_params(uint8_t* file, uint32_t op) {
  return file + header(file).params_offset + op_record(file, op).params_offset;
}
template <typename P>
P& params_as(uint8_t* file, uint32_t op) {
  return *reinterpret_cast<P*>(op_params(file, op));
}
inline uint8_t* constant_data(uint8_t* file, uint32_t tensor) {
  return file + header(file).constants_offset + tensor_record(file, tensor).offset;
}
// An optimized (tier) kernel computes what its reference does from the same leading inputs.
inline KernelId reference_of(uint16_t id) {
  switch (id) {
#define MCUFLOW_TEST_TIER_REFERENCE(name, tier_id, reference) \
  case tier_id:                                               \
    return KernelId::reference;
    MCUFLOW_TIER_KERNELS(MCUFLOW_TEST_TIER_REFERENCE)
#undef MCUFLOW_TEST_TIER_REFERENCE
    default:
      return KernelId(id);
  }
}

// Index of the first op running `kernel`, or -1.
inline int find_op(uint8_t* file, KernelId kernel) {
  for (uint32_t i = 0; i < header(file).op_count; ++i) {
    if (op_record(file, i).kernel == uint16_t(kernel)) return int(i);
  }
  return -1;
}
inline void fix_crc(uint8_t* file, size_t size) { write_checksums(file, uint32_t(size)); }
inline void fix_crc(std::vector<uint8_t>& v) { fix_crc(v.data(), v.size()); }
inline void fix_crc(AlignedBytes& b) { fix_crc(b.data(), b.size()); }

inline Error load_error(const uint8_t* data, size_t n, KernelTable k = all_kernels()) {
  AlignedBytes copy(data, n);
  return Program::load(copy.cspan(), k).error();
}
inline Error load_error(const std::vector<uint8_t>& v, KernelTable k = all_kernels()) {
  return load_error(v.data(), v.size(), k);
}

// PyTorch order shape of a tensor as the runtime describes it.
inline Shape logical_shape(const TensorInfo& t) {
  return compiler::logical_shape_of(Shape(t.dims, t.dims + t.rank), t.layout);
}

// ---------------------------------------------------------------------------------------------
// Loading and running a program in host memory. Not movable: the session points at the program,
// the program at the file bytes.

class Runner {
 public:
  explicit Runner(const std::vector<uint8_t>& bytes, KernelTable kernels = all_kernels())
      : Runner(bytes.data(), bytes.size(), kernels) {}
  Runner(const uint8_t* data, size_t n, KernelTable kernels = all_kernels()) : file_(data, n) {
    auto p = Program::load(file_.cspan(), kernels);
    error_ = p.error();
    if (!p.ok()) return;
    program_ = p.value();
    arena_ = std::make_unique<GuardedArena>(program_.arena_bytes());
    auto s = Session::bind(program_, arena_->span());
    error_ = s.error();
    if (s.ok()) session_ = s.value();
  }
  Runner(const Runner&) = delete;
  Runner& operator=(const Runner&) = delete;

  bool ok() const { return error_ == Error::kOk; }
  Error error() const { return error_; }
  const Program& program() const { return program_; }
  const Session& session() const { return session_; }
  GuardedArena& arena() { return *arena_; }
  const AlignedBytes& file() const { return file_; }

  // `values` in logical order; float inputs only (programs compiled without int8_io).
  void set_input(uint32_t i, const std::vector<float>& values) {
    const TensorInfo t = program_.input(i);
    const auto phys = compiler::logical_to_physical(reinterpret_cast<const uint8_t*>(values.data()),
                                                    logical_shape(t), t.layout, 4);
    auto buf = session_.input_buffer(i);
    if (buf.ok() && buf.value().size == phys.size()) std::memcpy(buf.value().data, phys.data(), phys.size());
  }
  void set_input_bytes(uint32_t i, const std::vector<uint8_t>& bytes) {
    auto buf = session_.input_buffer(i);
    if (buf.ok()) std::memcpy(buf.value().data, bytes.data(), std::min<size_t>(bytes.size(), buf.value().size));
  }
  // Fills the arena with pseudo-random bytes: a correct plan never reads bytes it did not write.
  void scramble_arena(uint32_t seed) {
    Rng rng(seed);
    for (size_t i = 0; i < arena_->size(); ++i) arena_->data()[i] = uint8_t(rng.uniform_int(0, 255));
  }
  Error run() const { return session_.run(); }
  std::vector<float> output(uint32_t i) const {
    const TensorInfo t = program_.output(i);
    auto buf = session_.output_buffer(i);
    const auto logical = compiler::physical_to_logical(buf.value().data, logical_shape(t), t.layout, 4);
    std::vector<float> v(logical.size() / 4);
    std::memcpy(v.data(), logical.data(), logical.size());
    return v;
  }

 private:
  AlignedBytes file_;
  Error error_ = Error::kOk;
  Program program_;
  std::unique_ptr<GuardedArena> arena_;
  Session session_;
};

// Random bytes into every input buffer; float32 inputs get random finite values (a random bit
// pattern may be NaN or Inf, which Session::run refuses).
inline void fill_inputs_randomly(const Program& program, const Session& session, Rng& rng) {
  for (uint32_t i = 0; i < program.input_count(); ++i) {
    auto buffer = session.input_buffer(i);
    if (!buffer.ok()) continue;  // streamed
    uint8_t* data = buffer.value().data;
    for (uint32_t k = 0; k < buffer.value().size; ++k) data[k] = uint8_t(rng.uniform_int(0, 255));
    if (program.input(i).dtype != format::DType::kFloat32) continue;
    for (uint32_t k = 3; k < buffer.value().size; k += 4) data[k] &= 0xBF;  // an exponent below all ones
  }
}

// Runs `bytes` once on `input` (logical order, one model input) and returns output `o`.
inline std::vector<float> run_once(const std::vector<uint8_t>& bytes, const std::vector<float>& input, uint32_t o = 0) {
  Runner r(bytes);
  if (!r.ok()) return {};
  r.set_input(0, input);
  if (r.run() != Error::kOk) return {};
  return r.output(o);
}

// ---------------------------------------------------------------------------------------------
// An independent double-precision interpreter of IR graphs in PyTorch's logical order (NCHW),
// honouring fused activation bounds (op.act_min/act_max) and the one layout rewrite that changes
// values, fold_flatten_into_linear (a rank-2 tensor flagged nhwc holds the NHWC order of its
// rank-4 source). Shares no code with the compiler's passes or kernels.

using Values = std::vector<std::vector<double>>;  // by tensor id

inline std::vector<int64_t> strides_of(const Shape& s) {
  std::vector<int64_t> st(s.size(), 1);
  for (int i = int(s.size()) - 2; i >= 0; --i) st[size_t(i)] = st[size_t(i) + 1] * s[size_t(i) + 1];
  return st;
}

inline std::vector<int64_t> pair_of(const Op& op, const std::string& name, std::vector<int64_t> fallback) {
  std::vector<int64_t> v = op.has_attr(name) ? op.ints_attr(name) : fallback;
  if (v.empty()) v = fallback;
  if (v.size() == 1) v.push_back(v[0]);
  return v;
}

inline std::vector<double> eval_broadcast(const std::vector<double>& a, const Shape& as, const std::vector<double>& b,
                                          const Shape& bs, const Shape& ys, bool is_add) {
  const int64_t n = numel(ys);
  std::vector<double> out(static_cast<size_t>(n));
  const auto yst = strides_of(ys);
  auto index = [&](const Shape& s, int64_t i) {
    const auto st = strides_of(s);
    const size_t off = ys.size() - s.size();
    int64_t r = 0;
    for (size_t d = off; d < ys.size(); ++d) {
      const int64_t coord = (i / yst[d]) % ys[d];
      if (s[d - off] != 1) r += coord * st[d - off];
    }
    return r;
  };
  for (int64_t i = 0; i < n; ++i) {
    const double x = a[size_t(index(as, i))], y = b[size_t(index(bs, i))];
    out[size_t(i)] = is_add ? x + y : x * y;
  }
  return out;
}

inline Values reference_eval(const Graph& g, const std::vector<std::vector<float>>& inputs) {
  Values v(g.tensors.size());
  for (size_t t = 0; t < g.tensors.size(); ++t) {
    if (g.tensors[t].constant) v[t].assign(g.tensors[t].data.begin(), g.tensors[t].data.end());
  }
  for (size_t i = 0; i < g.inputs.size(); ++i) v[size_t(g.inputs[i])].assign(inputs[i].begin(), inputs[i].end());
  for (const Op& op : g.ops) {
    const Tensor& xt = g.tensors[size_t(op.inputs[0])];
    const std::vector<double>& x = v[size_t(op.inputs[0])];
    const Shape& xs = xt.shape;
    const Tensor& yt = g.tensors[size_t(op.outputs[0])];
    const Shape& ys = yt.shape;
    std::vector<double> y(size_t(numel(ys)), 0.0);
    const std::string& k = op.kind;
    if (k == "conv2d") {
      const Shape& ws = g.tensors[size_t(op.inputs[1])].shape;
      const auto& w = v[size_t(op.inputs[1])];
      const auto stride = pair_of(op, "stride", {1, 1}), pad = pair_of(op, "padding", {0, 0}),
                 dil = pair_of(op, "dilation", {1, 1});
      const int64_t groups = op.int_attr("groups");
      const int64_t cin_g = ws[1], cout_g = ws[0] / groups;
      for (int64_t o = 0; o < ys[1]; ++o)
        for (int64_t oy = 0; oy < ys[2]; ++oy)
          for (int64_t ox = 0; ox < ys[3]; ++ox) {
            double acc = op.inputs.size() > 2 ? v[size_t(op.inputs[2])][size_t(o)] : 0.0;
            const int64_t grp = o / cout_g;
            for (int64_t ci = 0; ci < cin_g; ++ci)
              for (int64_t ky = 0; ky < ws[2]; ++ky)
                for (int64_t kx = 0; kx < ws[3]; ++kx) {
                  const int64_t iy = oy * stride[0] - pad[0] + ky * dil[0], ix = ox * stride[1] - pad[1] + kx * dil[1];
                  if (iy < 0 || iy >= xs[2] || ix < 0 || ix >= xs[3]) continue;
                  const int64_t c = grp * cin_g + ci;
                  acc += x[size_t((c * xs[2] + iy) * xs[3] + ix)] * w[size_t(((o * cin_g + ci) * ws[2] + ky) * ws[3] + kx)];
                }
            y[size_t((o * ys[2] + oy) * ys[3] + ox)] = acc;
          }
    } else if (k == "linear") {
      const Shape& ws = g.tensors[size_t(op.inputs[1])].shape;
      const auto& w = v[size_t(op.inputs[1])];
      const int64_t in = ws[1], out = ws[0], rows = numel(xs) / in;
      for (int64_t r = 0; r < rows; ++r)
        for (int64_t o = 0; o < out; ++o) {
          double acc = op.inputs.size() > 2 ? v[size_t(op.inputs[2])][size_t(o)] : 0.0;
          for (int64_t i = 0; i < in; ++i) acc += x[size_t(r * in + i)] * w[size_t(o * in + i)];
          y[size_t(r * out + o)] = acc;
        }
    } else if (k == "relu") {
      for (size_t i = 0; i < y.size(); ++i) y[i] = std::max(x[i], 0.0);
    } else if (k == "clamp") {
      const double lo = op.float_attr("min"), hi = op.float_attr("max");
      for (size_t i = 0; i < y.size(); ++i) y[i] = std::min(std::max(x[i], lo), hi);
    } else if (k == "add" || k == "mul") {
      y = eval_broadcast(x, xs, v[size_t(op.inputs[1])], g.tensors[size_t(op.inputs[1])].shape, ys, k == "add");
    } else if (k == "max_pool2d" || k == "avg_pool2d" || k == "mean" || k == "adaptive_avg_pool2d") {
      std::vector<int64_t> kern, stride, pad = {0, 0};
      const int64_t oh = ys.size() == 4 ? ys[2] : 1, ow = ys.size() == 4 ? ys[3] : 1;
      if (k == "mean" || k == "adaptive_avg_pool2d") {
        kern = {xs[2] / oh, xs[3] / ow};
        stride = kern;
      } else {
        kern = pair_of(op, "kernel", {});
        stride = pair_of(op, "stride", kern);
        pad = pair_of(op, "padding", {0, 0});
      }
      for (int64_t c = 0; c < xs[1]; ++c)
        for (int64_t oy = 0; oy < oh; ++oy)
          for (int64_t ox = 0; ox < ow; ++ox) {
            double m = -INFINITY, sum = 0.0;
            int count = 0;
            for (int64_t ky = 0; ky < kern[0]; ++ky)
              for (int64_t kx = 0; kx < kern[1]; ++kx) {
                const int64_t iy = oy * stride[0] - pad[0] + ky, ix = ox * stride[1] - pad[1] + kx;
                if (iy < 0 || iy >= xs[2] || ix < 0 || ix >= xs[3]) continue;
                const double e = x[size_t((c * xs[2] + iy) * xs[3] + ix)];
                m = std::max(m, e);
                sum += e;
                ++count;
              }
            y[size_t((c * oh + oy) * ow + ox)] = k == "max_pool2d" ? m : sum / count;
          }
    } else if (k == "reshape" || k == "identity") {
      if (yt.nhwc && ys.size() == 2 && xt.nhwc && xs.size() == 4) {  // flatten folded into linear
        for (int64_t c = 0; c < xs[1]; ++c)
          for (int64_t h = 0; h < xs[2]; ++h)
            for (int64_t w = 0; w < xs[3]; ++w) y[size_t((h * xs[3] + w) * xs[1] + c)] = x[size_t((c * xs[2] + h) * xs[3] + w)];
      } else {
        y = x;
      }
    } else if (k == "permute") {
      const auto& perm = op.ints_attr("perm");
      const auto xst = strides_of(xs), yst = strides_of(ys);
      for (int64_t i = 0; i < numel(ys); ++i) {
        int64_t src = 0;
        for (size_t d = 0; d < ys.size(); ++d) {
          const int64_t p = perm[d] < 0 ? perm[d] + int64_t(perm.size()) : perm[d];
          src += ((i / yst[d]) % ys[d]) * xst[size_t(p)];
        }
        y[size_t(i)] = x[size_t(src)];
      }
    } else if (k == "softmax") {  // over any dim: [outer][depth][inner]
      int64_t dim = op.int_attr("dim");
      if (dim < 0) dim += int64_t(xs.size());
      const int64_t depth = xs[size_t(dim)];
      int64_t inner = 1;
      for (size_t d = size_t(dim) + 1; d < xs.size(); ++d) inner *= xs[d];
      const int64_t outer = numel(xs) / (depth * inner);
      for (int64_t o = 0; o < outer; ++o)
        for (int64_t in = 0; in < inner; ++in) {
          auto at = [&](int64_t i) { return size_t((o * depth + i) * inner + in); };
          double m = -INFINITY, sum = 0.0;
          for (int64_t i = 0; i < depth; ++i) m = std::max(m, x[at(i)]);
          for (int64_t i = 0; i < depth; ++i) sum += std::exp(x[at(i)] - m);
          for (int64_t i = 0; i < depth; ++i) y[at(i)] = std::exp(x[at(i)] - m) / sum;
        }
    } else if (k == "cat") {
      int64_t dim = op.int_attr("dim");
      if (dim < 0) dim += int64_t(ys.size());
      int64_t outer = 1, inner = 1;
      for (int64_t d = 0; d < dim; ++d) outer *= ys[size_t(d)];
      for (size_t d = size_t(dim) + 1; d < ys.size(); ++d) inner *= ys[d];
      int64_t offset = 0;
      for (int in : op.inputs) {
        const int64_t len = g.tensors[size_t(in)].shape[size_t(dim)] * inner;
        for (int64_t o = 0; o < outer; ++o)
          for (int64_t i = 0; i < len; ++i) y[size_t(o * ys[size_t(dim)] * inner + offset + i)] = v[size_t(in)][size_t(o * len + i)];
        offset += len;
      }
    } else if (k == "batch_norm") {
      const auto &gamma = v[size_t(op.inputs[1])], &beta = v[size_t(op.inputs[2])], &mean = v[size_t(op.inputs[3])],
                 &var = v[size_t(op.inputs[4])];
      const double eps = op.float_attr("eps");
      const int64_t c_n = xs[1], inner = numel(xs) / (xs[0] * c_n);
      for (int64_t i = 0; i < numel(xs); ++i) {
        const int64_t c = (i / inner) % c_n;
        y[size_t(i)] = (x[size_t(i)] - mean[size_t(c)]) / std::sqrt(var[size_t(c)] + eps) * gamma[size_t(c)] + beta[size_t(c)];
      }
    } else {
      throw std::runtime_error("reference_eval: no rule for " + k);
    }
    for (double& e : y) e = std::min(std::max(e, double(op.act_min)), double(op.act_max));
    v[size_t(op.outputs[0])] = std::move(y);
  }
  return v;
}

inline std::vector<std::vector<float>> random_inputs(const Graph& g, Rng& rng, double lo = -1.0, double hi = 1.0) {
  std::vector<std::vector<float>> in;
  for (int t : g.inputs) in.push_back(rng.floats(size_t(g.tensors[size_t(t)].numel()), lo, hi));
  return in;
}

inline double max_abs_diff(const std::vector<double>& a, const std::vector<double>& b) {
  if (a.size() != b.size()) return INFINITY;
  double m = 0;
  for (size_t i = 0; i < a.size(); ++i) m = std::max(m, std::fabs(a[i] - b[i]));
  return m;
}
inline double max_abs_diff(const std::vector<float>& a, const std::vector<double>& b) {
  return max_abs_diff(std::vector<double>(a.begin(), a.end()), b);
}

// ---------------------------------------------------------------------------------------------
// Random small models: a DAG of the front-end vocabulary over [1, C, H, W] activations that
// ends in rank-2 ops, with constants, fusable activations, views, branches and dead ops.

inline Graph random_graph(uint32_t seed, int max_ops = 10) {
  Rng rng(seed);
  Builder b;
  std::vector<int> images, vectors;  // live activations by rank
  const int64_t c0 = rng.uniform_int(1, 4), h0 = rng.uniform_int(3, 8), w0 = rng.uniform_int(3, 8);
  images.push_back(b.input("x", {1, c0, h0, w0}));
  if (rng.coin(0.25)) vectors.push_back(b.input("v", {1, int64_t(rng.uniform_int(2, 12))}));
  auto shape = [&](int t) { return b.g.tensors[size_t(t)].shape; };
  auto pick = [&](const std::vector<int>& from) { return from[size_t(rng.uniform_int(0, int(from.size()) - 1))]; };
  auto name = [&](const char* n) { return std::string(n) + std::to_string(b.g.tensors.size()); };
  const int n_ops = rng.uniform_int(2, max_ops);
  int last = images[0];
  for (int i = 0; i < n_ops; ++i) {
    const int choice = rng.uniform_int(0, 13);
    int y = -1;
    if (choice <= 8 || vectors.empty()) {
      const int x = pick(images);
      const Shape xs = shape(x);
      const int64_t c = xs[1], h = xs[2], w = xs[3];
      switch (choice % 9) {
        case 0: {  // conv
          const int64_t k = rng.coin() ? 1 : 3, oc = rng.uniform_int(1, 6), s = (h >= 4 && rng.coin(0.3)) ? 2 : 1;
          y = b.conv(x, b.random_constant(name("w"), {oc, c, k, k}, rng, -0.6, 0.6),
                     rng.coin(0.7) ? b.random_constant(name("b"), {oc}, rng, -0.2, 0.2) : -1, s, k / 2);
          break;
        }
        case 1:  // depthwise conv, channel multiplier 1 or 2
        {
          const int64_t mult = rng.coin(0.7) ? 1 : 2;
          y = b.conv(x, b.random_constant(name("dw"), {c * mult, 1, 3, 3}, rng, -0.6, 0.6), -1, 1, 1, c);
          break;
        }
        case 2:
          y = b.relu(x);
          break;
        case 3:
          y = b.clamp(x, -rng.uniform(0.1, 1.0), rng.uniform(0.1, 1.5));
          break;
        case 4: {  // add with another image of the same shape, or a per-channel constant
          std::vector<int> same;
          for (int t : images) {
            if (shape(t) == xs && t != x) same.push_back(t);
          }
          const int other = !same.empty() && rng.coin(0.7) ? pick(same) : b.random_constant(name("c"), {1, c, 1, 1}, rng);
          y = b.op("add", {x, other});
          break;
        }
        case 5:  // mul by a per-channel or scalar constant
          y = b.op("mul", {x, rng.coin() ? b.random_constant(name("s"), {1, c, 1, 1}, rng, 0.5, 1.5)
                                         : b.random_constant(name("s"), {1}, rng, 0.5, 1.5)});
          break;
        case 6:  // pooling
          if (h >= 2 && w >= 2) y = rng.coin() ? b.max_pool(x, 2, 2) : b.avg_pool(x, 3, 2, 1);
          else y = b.relu(x);
          break;
        case 7: {  // channel concat with itself or a same-size image
          std::vector<int> same;
          for (int t : images) {
            if (shape(t)[2] == h && shape(t)[3] == w) same.push_back(t);
          }
          y = b.cat({x, pick(same)}, 1);
          break;
        }
        default:  // to a vector: global mean, or flatten
          y = rng.coin() ? b.mean_hw(x, false) : b.reshape(x, {1, -1});
          vectors.push_back(y);
          last = y;
          continue;
      }
      images.push_back(y);
    } else {
      const int x = pick(vectors);
      const int64_t n = shape(x)[1];
      switch (choice) {
        case 9:
        case 10: {
          const int64_t out = rng.uniform_int(1, 10);
          y = b.linear(x, b.random_constant(name("fw"), {out, n}, rng, -0.5, 0.5),
                       rng.coin(0.7) ? b.random_constant(name("fb"), {out}, rng, -0.2, 0.2) : -1);
          break;
        }
        case 11:
          y = rng.coin() ? b.relu(x) : b.op("add", {x, b.random_constant(name("vb"), {n}, rng)});
          break;
        case 12:
          y = b.softmax(x);
          break;
        default:
          y = b.op("identity", {x});
          break;
      }
      vectors.push_back(y);
    }
    last = y;
  }
  std::vector<int> outs = {last};
  if (rng.coin(0.3)) {
    const int extra = pick(rng.coin() ? images : (vectors.empty() ? images : vectors));
    if (extra != last && !b.g.tensors[size_t(extra)].constant &&
        std::find(b.g.inputs.begin(), b.g.inputs.end(), extra) == b.g.inputs.end())
      outs.push_back(extra);
  }
  // Unused model inputs would be legal but are not interesting: make every input reach an output.
  for (int in : b.g.inputs) {
    if (b.g.consumers(in).empty() && std::find(outs.begin(), outs.end(), in) == outs.end()) {
      outs.push_back(b.relu(in));
    }
  }
  b.outputs(outs);
  return b.g;
}

}  // namespace mcuflow::tp
