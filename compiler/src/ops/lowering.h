// What the op families' lowerings share (compiler/src/ops/<family>.cpp): the lowering state
// (the graph, the program being built, which program tensor holds each IR tensor) and the
// helpers every family uses to create tensors, emit kernel ops and move data between layouts.
// A family lowers its ops in a class derived from Lowering, built over the shared state.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <numeric>
#include <string>
#include <vector>

#include "mcuflow/compiler/kernel_selection.h"
#include "mcuflow/compiler/lower.h"
#include "mcuflow/compiler/op_registry.h"
#include "mcuflow/compiler/quant_math.h"
#include "mcuflow/compiler/quantizer.h"
#include "mcuflow/kernels/arith.h"
#include "mcuflow/kernels/params.h"
#include "shape_helpers.h"

namespace mcuflow::compiler {

using format::DType;
using format::Layout;
namespace k = mcuflow::kernels;

template <typename P>
std::vector<uint8_t> params_bytes(const P& p) {
  std::vector<uint8_t> bytes(sizeof(P));
  std::memcpy(bytes.data(), &p, sizeof(P));
  return bytes;
}

template <typename T>
std::vector<uint8_t> raw_bytes(const std::vector<T>& values) {
  std::vector<uint8_t> bytes(values.size() * sizeof(T));
  if (!values.empty()) std::memcpy(bytes.data(), values.data(), bytes.size());
  return bytes;
}

// `real` in `q`'s integers, clamped to its element type; an infinite bound is the type's limit.
inline int32_t quantized_bound(float real, const Quant& q, bool upper) {
  if (std::isinf(real)) return int32_t(upper ? q.type_max() : q.type_min());
  const double v = std::round(double(real) / q.scale) + q.zero_point;
  return int32_t(std::clamp(v, double(q.type_min()), double(q.type_max())));
}

// The bounds an unquantized (float) kernel's params carry in their unused integer fields.
inline const Quant kUnquantized{};

// A mask's 0/1 bytes as a quantized tensor (their own values), in every program.
inline const Quant kMaskQuant = mask_quant();

// A tensor's spec, which int8 lowering requires the quantizer to have assigned.
inline const Quant& spec_of(const Tensor& t) {
  if (!t.quant.valid) throw CompileError("tensor " + t.name + " has no quantization (the quantizer assigns it)");
  return t.quant;
}

// Quantized constant values in the element type the kernel reads.
template <typename T, typename From>
std::vector<T> narrowed(const std::vector<From>& values) {
  return std::vector<T>(values.begin(), values.end());
}

// The element type of activations quantized by `q`: int8, or int16 (an int16 program's A16W8 ops).
inline DType quantized_dtype(const Quant& q) { return q.bits > kActivationBits ? DType::kInt16 : DType::kInt8; }

// Quantized values as the bytes of elements of `dtype` (int8 or int16).
inline std::vector<uint8_t> quantized_bytes(const std::vector<int64_t>& values, DType dtype) {
  return dtype == DType::kInt16 ? raw_bytes(narrowed<int16_t>(values)) : raw_bytes(narrowed<int8_t>(values));
}

// values[from[i]] at each i: constant data rearranged into a kernel's layout.
template <typename T>
std::vector<T> gathered(const std::vector<T>& values, const std::vector<size_t>& from) {
  std::vector<T> out(from.size());
  for (size_t i = 0; i < from.size(); ++i) out[i] = values[from[i]];
  return out;
}

// A constant's data quantized by its spec, in logical order.
inline std::vector<int64_t> quantized(const Tensor& t) { return quantize_values(t.data, spec_of(t), t.shape); }

inline bool is_trivial_permutation(const std::vector<int>& perm, const std::vector<int32_t>& in_dims) {
  int last = -1;
  for (int p : perm) {
    if (in_dims[p] == 1) continue;
    if (p < last) return false;
    last = p;
  }
  return true;
}

struct LoweringState {
  LoweringState(const Graph& graph, const LowerOptions& options)
      : g(graph), o(options), program_of(graph.tensors.size(), -1) {}
  const Graph& g;
  const LowerOptions& o;
  LoweredProgram p;
  std::vector<int> program_of;  // IR tensor -> the program tensor holding it, or -1
  bool float_fallback = false;  // lowering one op of an int8 program in float (lower_as_float)
  std::string fallback_reason;  // recorded on every op emitted meanwhile
};

class Lowering {
 public:
  explicit Lowering(LoweringState& s)
      : s_(s), g_(s.g), o_(s.o), p_(s.p), program_of_(s.program_of), float_fallback_(s.float_fallback),
        fallback_reason_(s.fallback_reason) {}
  LoweringState& state() const { return s_; }

 protected:
  // In a quantized (int8 or int16) program, an op without a usable quantized kernel runs in
  // float (lower_as_float).
  bool is_quantized() const { return o_.precision != Precision::kFloat32 && !float_fallback_; }
  DType act_dtype() const { return is_quantized() ? DType::kInt8 : DType::kFloat32; }
  // IR tensor `ir`'s element type in this program: masks are int8 and ids int32 in every program;
  // quantized real values int8 or int16 by their spec.
  DType dtype_of(int ir) const {
    const Tensor& t = tensor(ir);
    if (t.element == Element::kMask) return DType::kInt8;
    if (t.element == Element::kIds) return DType::kInt32;
    return is_quantized() ? quantized_dtype(t.quant) : DType::kFloat32;
  }
  // Whether IR tensor `ir` holds int16 values in this program.
  bool is_int16(int ir) const { return dtype_of(ir) == DType::kInt16; }

  static Layout layout_of(const Tensor& t) {
    if (!t.nhwc) return Layout::kPlain;
    return t.shape.size() >= 3 ? Layout::kNhwc : Layout::kFlatNhwc;  // rank 3: a 1-D layers' (N, C, L) I/O
  }

  static std::vector<int32_t> physical_dims(const Tensor& t) {
    std::vector<int32_t> dims;
    for (int d : physical_order(layout_of(t), t.shape.size())) dims.push_back(int32_t(t.shape[d]));
    if (dims.empty()) dims.push_back(1);
    return dims;
  }

  const Tensor& tensor(int id) const { return g_.tensors[id]; }

  ProgramTensor activation_record(int ir, DType dtype) const {
    const Tensor& t = tensor(ir);
    if (t.shape.size() > format::kMaxRank)  // infer_shapes refuses such ops first, naming them
      throw CompileError("tensor " + t.name + " has " + std::to_string(t.shape.size()) + " dims; at most " +
                         std::to_string(format::kMaxRank) + " are supported");
    ProgramTensor pt;
    pt.name = t.name;
    pt.dtype = dtype;
    pt.dims = physical_dims(t);
    pt.logical_shape = t.shape;
    pt.layout = layout_of(t);
    pt.ir_tensor = ir;
    if (t.element == Element::kMask) {
      pt.scale = kMaskQuant.scale;
      pt.zero_point = kMaskQuant.zero_point;
    } else if (dtype == DType::kInt8 || dtype == DType::kInt16) {
      pt.scale = t.quant.scale;
      pt.zero_point = t.quant.zero_point;
    }
    return pt;
  }

  // The program tensor holding IR activation `ir` (created on first use).
  int activation(int ir) {
    if (program_of_[ir] >= 0) return program_of_[ir];
    const Tensor& t = tensor(ir);
    if (t.constant) throw CompileError("constant tensor " + t.name + " used where an activation is expected");
    if (is_quantized() && t.element == Element::kReal && !t.quant.valid)
      throw CompileError("tensor " + t.name + " has no quantization (not reached by calibration)");
    program_of_[ir] = p_.add_tensor(activation_record(ir, dtype_of(ir)));
    return program_of_[ir];
  }

  template <typename T>
  int constant(const std::string& name, DType dtype, std::vector<int32_t> dims, const std::vector<T>& values) {
    return add_constant_tensor(p_, name, dtype, std::move(dims), raw_bytes(values));
  }

  // A new record shaped and typed like tensor `from` (a view of it, a copy, a requantized copy).
  // Being a state is the one tensor's role, not its type: a view of a state shares the state's
  // bytes and a copy is an ordinary arena tensor, so neither carries the flag or the initial value
  // (a second state record over the same bytes would fail verification).
  ProgramTensor derived_record(int from) const {
    ProgramTensor pt = p_.tensors[from];
    if (pt.state) {
      pt.state = false;
      pt.bytes.clear();
    }
    return pt;
  }

  int alias(int root, const std::string& name, std::vector<int32_t> dims, int ir = -1) {
    ProgramTensor pt = derived_record(root);
    pt.name = name;
    pt.dims = std::move(dims);
    pt.alias_of = p_.tensors[root].alias_of >= 0 ? p_.tensors[root].alias_of : root;
    pt.ir_tensor = ir;
    if (ir >= 0) {
      pt.logical_shape = tensor(ir).shape;
      pt.layout = layout_of(tensor(ir));
    }
    return p_.add_tensor(std::move(pt));
  }

  void emit(KernelId kernel, std::vector<int> in, std::vector<int> out, std::vector<uint8_t> params, const Op* op,
            int64_t macs = 0) {
    ProgramOp pop;
    pop.kernel = kernel;
    pop.inputs = std::move(in);
    pop.outputs = std::move(out);
    pop.params = std::move(params);
    const bool input = kernel == KernelId::quantize_f32_s8 || kernel == KernelId::quantize_f32_s16;
    pop.ir_kind = op ? op->kind : input ? "quantize_input" : "dequantize_output";
    pop.fallback = fallback_reason_;
    pop.source = op ? op->source : "";
    if (op && !op->outputs.empty()) {
      const auto note = o_.layer_notes.find(tensor(op->outputs[0]).name);
      if (note != o_.layer_notes.end()) pop.precision = note->second;
    }
    pop.macs = macs;
    p_.ops.push_back(std::move(pop));
  }

  // The op's "dim" attribute for a tensor of `rank` dims, negative values counted from the end
  // (shape inference has checked the range).
  static size_t dim_of(const Op& op, size_t rank) {
    const int64_t dim = op.int_attr("dim");
    return size_t(dim < 0 ? dim + int64_t(rank) : dim);
  }

  void require_batch1(const Op& op, const Tensor& x) {
    if (x.shape[0] != 1) fail(op, "batch size " + std::to_string(x.shape[0]) + " in the exported graph; export with batch size 1 (mcuflow iterates batches)");
  }

  // y's output stage: in a quantized program its zero point and the fused activation's bounds
  // in its integers; in float the unused fields hold kUnquantized's bounds.
  k::OutputStage output_stage(const Op& op, const Tensor& y) const {
    if (!is_quantized()) return {0, int32_t(kUnquantized.type_min()), int32_t(kUnquantized.type_max())};
    return {y.quant.zero_point, quantized_bound(op.act_min, y.quant, false), quantized_bound(op.act_max, y.quant, true)};
  }

  template <typename P>
  static void fill_float_bounds(P& p, const Op& op) {
    p.act_min_f = std::isinf(op.act_min) ? -3.4e38f : op.act_min;
    p.act_max_f = std::isinf(op.act_max) ? 3.4e38f : op.act_max;
  }

  // Params with an OutputStage (the weighted kernels).
  template <typename P>
  void fill_output_stage(P& p, const Op& op, const Tensor& y) {
    p.out = output_stage(op, y);
    fill_float_bounds(p, op);
  }

  // Params with bounds of their own (the output offset, if any, is the caller's).
  template <typename P>
  void fill_activation(P& p, const Op& op, const Tensor& y) {
    const k::OutputStage o = output_stage(op, y);
    p.act_min = o.act_min;
    p.act_max = o.act_max;
    fill_float_bounds(p, op);
  }

  // The bias (quantized by its spec; 0 without one) of `channels` outputs, and the
  // multipliers and shifts (per output channel, or one for per-tensor weights) of input x
  // weight products to the output. `reduction` (products summed per output) bounds the
  // accumulator: the bias is clamped so bias + accumulator always fits the accumulator (the
  // verifier requires it). int8 activations: int32 biases and accumulator, |x - zero point| <=
  // 255; int16 ones (zero point 0): int64 biases, |x| <= 2^15, a 48-bit accumulator limit and
  // shifts up to kernels::kWideMaxShift.
  void requant_tables(const Op& op, const Tensor& x, const Tensor& w, const Tensor& y, int32_t channels,
                      int64_t reduction, int& bias_id, int& mult_id, int& shift_id) {
    const Quant& wq = spec_of(w);
    const bool wide = x.quant.bits > kActivationBits;
    const double max_input = wide ? double(-x.quant.type_min()) : double(x.quant.type_max() - x.quant.type_min());
    const double accumulator_limit = wide ? double(k::kWideAccumulatorLimit - 1) : double(std::numeric_limits<int32_t>::max());
    const double bias_limit = accumulator_limit - double(reduction) * max_input * double(-wq.type_min());
    if (bias_limit < 0) fail(op, "a reduction of " + std::to_string(reduction) + " products could overflow the accumulator");
    std::vector<int64_t> b(size_t(channels), 0);
    if (op.inputs.size() > 2) {
      b = quantized(tensor(op.inputs[2]));
      for (int64_t& v : b) v = int64_t(std::clamp(double(v), -bias_limit, bias_limit));
    }
    const size_t scales = wq.per_axis() ? wq.scales.size() : 1;
    std::vector<int32_t> m(scales), s(scales);
    for (size_t c = 0; c < scales; ++c) {
      const QuantizedMultiplier qm = quantize_multiplier(double(x.quant.scale) * wq.scale_at(c) / y.quant.scale);
      if (wide && qm.shift > k::kWideMaxShift)
        fail(op, "the output scale is too small for the int16 kernel (input x weight / output scale above 2^" +
                     std::to_string(k::kWideMaxShift) + ")");
      m[c] = qm.multiplier;
      s[c] = qm.shift;
    }
    const std::string& name = w.name;
    bias_id = wide ? constant(name + ".bias", DType::kInt64, {int32_t(b.size())}, b)
                   : constant(name + ".bias", DType::kInt32, {int32_t(b.size())}, narrowed<int32_t>(b));
    mult_id = constant(name + ".multipliers", DType::kInt32, {int32_t(m.size())}, m);
    shift_id = constant(name + ".shifts", DType::kInt32, {int32_t(s.size())}, s);
  }

  // The constant holding the quantized weights `values` (device order) of `w`: int8, or with a
  // 4-bit spec int4 packed two a byte, element i in the low nibble of byte i / 2 when i is even
  // and in the high nibble when odd (an odd count leaves the last high nibble 0).
  int weight_constant(const Tensor& w, std::vector<int32_t> dims, const std::vector<int64_t>& values) {
    if (spec_of(w).bits != kInt4WeightBits) return constant(w.name, DType::kInt8, std::move(dims), narrowed<int8_t>(values));
    std::vector<uint8_t> packed((values.size() + 1) / 2, 0);
    for (size_t i = 0; i < values.size(); ++i) packed[i / 2] |= uint8_t((uint64_t(values[i]) & 0xF) << (i % 2 * 4));
    return add_constant_tensor(p_, w.name, DType::kInt4, std::move(dims), std::move(packed));
  }
  bool int4_weights(const Tensor& w) const { return spec_of(w).bits == kInt4WeightBits; }

  // Compiled with weights="int4": whether the op just emitted reads int4 weights, or why its
  // weights `w` stay int8 (mcuflow inspect shows it).
  void note_weights(const Op& op, const Tensor& w) {
    if (o_.weight_bits != kInt4WeightBits) return;
    const std::string rejection = int4_weights(w) ? "" : int4_rejection(g_, op);
    p_.ops.back().weights = int4_weights(w) ? "int4" : "int8: " + (rejection.empty() ? "chosen for this layer" : rejection);
  }

  std::vector<float> bias_of(const Op& op, int64_t channels) const {
    if (op.inputs.size() > 2) return tensor(op.inputs[2]).data;
    return std::vector<float>(size_t(channels), 0.0f);
  }

  // Constant data (logical order) rearranged into the physical order of `layout`.
  static std::vector<float> to_physical(const std::vector<float>& data, const Shape& shape, Layout layout) {
    if (layout != Layout::kNhwc) return data;
    std::vector<float> out(data.size());
    const int64_t c = shape[1], h = shape[2], w = shape[3];
    for (int64_t n = 0; n < shape[0]; ++n)
      for (int64_t ci = 0; ci < c; ++ci)
        for (int64_t yi = 0; yi < h; ++yi)
          for (int64_t xi = 0; xi < w; ++xi)
            out[((n * h + yi) * w + xi) * c + ci] = data[((n * c + ci) * h + yi) * w + xi];
    return out;
  }

  // The parameters of reduce_s8 / reduce_f32 from x to y over [outer][reduce][inner]: int8 sums
  // (or the maximum) of the offset inputs requantized once, a mean's 1/reduce in the multiplier.
  k::ReduceParams reduce_params(const Tensor& x, const Tensor& y, int32_t outer, int32_t reduce, int32_t inner,
                                int32_t reduce_op) const {
    k::ReduceParams p{};
    p.outer = outer;
    p.reduce = reduce;
    p.inner = inner;
    p.op = reduce_op;
    const Quant& q = is_quantized() ? y.quant : kUnquantized;
    p.act_min = int32_t(q.type_min());
    p.act_max = int32_t(q.type_max());
    if (is_quantized()) {
      p.input_offset = -x.quant.zero_point;
      p.output_offset = y.quant.zero_point;
      const double count = reduce_op == k::kReduceMean ? double(reduce) : 1.0;
      const QuantizedMultiplier m = quantize_multiplier(double(x.quant.scale) / (count * y.quant.scale));
      p.multiplier = m.multiplier;
      p.shift = m.shift;
    }
    return p;
  }

  void emit_pool(const Op& op, bool is_max, int32_t kh, int32_t kw, int32_t sh, int32_t sw, int32_t ph, int32_t pw,
                 bool padding_counts = false) {
    const Tensor& x = tensor(op.inputs[0]);
    const Tensor& y = tensor(op.outputs[0]);
    require_batch1(op, x);
    k::PoolParams p{};
    p.in_h = int32_t(x.shape[2]); p.in_w = int32_t(x.shape[3]); p.c = int32_t(x.shape[1]);
    p.out_h = int32_t(y.shape.size() == 4 ? y.shape[2] : 1);  // mean without keepdim: [N, C]
    p.out_w = int32_t(y.shape.size() == 4 ? y.shape[3] : 1);
    p.k_h = kh; p.k_w = kw; p.stride_h = sh; p.stride_w = sw; p.pad_top = ph; p.pad_left = pw;
    const Quant& q = is_quantized() ? x.quant : kUnquantized;  // the output's too
    p.act_min = int32_t(q.type_min());
    p.act_max = int32_t(q.type_max());
    p.act_min_f = -3.4e38f;
    p.act_max_f = 3.4e38f;
    const int in = activation(op.inputs[0]);
    const int out = activation(op.outputs[0]);
    if (is_quantized() && (x.quant.scale != y.quant.scale || x.quant.zero_point != y.quant.zero_point)) {
      // An average over the whole image with a spec of its own (OutputQuant::kAverage): its sums
      // requantized once.
      const bool whole_image = !is_max && kh == p.in_h && kw == p.in_w && ph == 0 && pw == 0 && p.out_h == 1 &&
                               p.out_w == 1 && !padding_counts;
      if (!whole_image) fail(op, "pooling input and output must share quantization");
      emit(KernelId::reduce_s8, {in}, {out},
           params_bytes(reduce_params(x, y, 1, p.in_h * p.in_w, p.c, k::kReduceMean)), &op, x.numel());
      return;
    }
    const int64_t macs = int64_t(p.out_h) * p.out_w * p.c * kh * kw;
    if (padding_counts) {
      const k::AvgPoolIncludePadParams ip{p, is_quantized() ? x.quant.zero_point : 0};
      emit(is_quantized() ? KernelId::avgpool_include_pad_s8 : KernelId::avgpool_include_pad_f32, {in}, {out},
           params_bytes(ip), &op, macs);
      return;
    }
    const DType dtype = p_.tensors[in].dtype;
    const KernelId id = dtype == DType::kInt16 ? (is_max ? KernelId::maxpool_s16 : KernelId::avgpool_s16)
                        : is_max           ? (is_quantized() ? KernelId::maxpool_s8 : KernelId::maxpool_f32)
                                           : (is_quantized() ? KernelId::avgpool_s8 : KernelId::avgpool_f32);
    emit(id, {in}, {out}, params_bytes(p), &op, macs);
  }

  void lower_global_pool(const Op& op) {
    const Tensor& x = tensor(op.inputs[0]);
    const Tensor& y = tensor(op.outputs[0]);
    const int64_t oh = y.shape.size() == 4 ? y.shape[2] : 1, ow = y.shape.size() == 4 ? y.shape[3] : 1;
    const int32_t kh = int32_t(x.shape[2] / oh), kw = int32_t(x.shape[3] / ow);
    emit_pool(op, false, kh, kw, kh, kw, 0, 0);
  }

  // A physical permutation from `in` (program tensor) to a new tensor with dims `out_dims`,
  // or a view when the permutation only moves size-1 dims.
  int permute_or_alias(const Op& op, int in, const std::vector<int>& perm, const std::string& name, int ir) {
    const std::vector<int32_t> in_dims = p_.tensors[in].dims;  // copy: add_tensor below reallocates
    std::vector<int32_t> out_dims;
    for (int d : perm) out_dims.push_back(in_dims[d]);
    if (is_trivial_permutation(perm, in_dims)) return alias(in, name, out_dims, ir);
    ProgramTensor pt = derived_record(in);
    pt.name = name;
    pt.dims = out_dims;
    pt.alias_of = -1;
    pt.ir_tensor = ir;
    if (ir >= 0) {
      pt.logical_shape = tensor(ir).shape;
      pt.layout = layout_of(tensor(ir));
    } else {
      pt.logical_shape.assign(out_dims.begin(), out_dims.end());
      pt.layout = Layout::kPlain;
    }
    const int out = p_.add_tensor(std::move(pt));
    // int16 elements move as byte pairs: an innermost dim of 2 bytes that stays in place.
    const bool pairs = p_.tensors[in].dtype == DType::kInt16;
    const int rank = int(in_dims.size()) + (pairs ? 1 : 0);
    if (rank > int(k::kMaxRank)) fail(op, "internal: an int16 permute of rank " + std::to_string(in_dims.size()));
    k::PermuteParams p{};
    const int pad = int(k::kMaxRank) - rank;
    for (int d = 0; d < int(k::kMaxRank); ++d) {
      const bool pair_dim = pairs && d == int(k::kMaxRank) - 1;
      p.in_dims[d] = d < pad ? 1 : pair_dim ? 2 : in_dims[size_t(d - pad)];
      p.perm[d] = d < pad || pair_dim ? d : perm[size_t(d - pad)] + pad;
    }
    const bool bytes = p_.tensors[in].dtype == DType::kInt8 || pairs;
    emit(bytes ? KernelId::permute_b8 : KernelId::permute_b32, {in}, {out}, params_bytes(p), &op);
    return out;
  }

  // --- layouts: computing in one dim order, defining outputs in another ---

  static std::vector<int> identity_order(size_t rank) {
    std::vector<int> order(rank);
    std::iota(order.begin(), order.end(), 0);
    return order;
  }

  static std::vector<int32_t> dims_in_order(const Shape& shape, const std::vector<int>& order) {
    std::vector<int32_t> dims;
    for (int d : order) dims.push_back(int32_t(shape[size_t(d)]));
    if (dims.empty()) dims.push_back(1);
    return dims;
  }

  static std::vector<int32_t> logical_dims(const Tensor& t) { return dims_in_order(t.shape, identity_order(t.shape.size())); }

  // A program tensor holding IR activation `ir` with its logical dims in `order` (a view when
  // that is its physical order up to size-1 dims, a permuted copy otherwise).
  int reordered(const Op& op, int ir, const std::vector<int>& order) {
    const Tensor& t = tensor(ir);
    if (layout_of(t) == Layout::kFlatNhwc) fail(op, "this op cannot read a flattened image tensor");
    const std::vector<int> phys = physical_order(layout_of(t), t.shape.size());
    std::vector<int> perm;
    for (int d : order) perm.push_back(int(std::find(phys.begin(), phys.end(), d) - phys.begin()));
    if (perm.empty()) return activation(ir);
    return permute_or_alias(op, activation(ir), perm, t.name + ".reordered", -1);
  }

  // An arena tensor for an op to write: `ir_y`'s dtype and quantization, the given dims.
  int scratch(int ir_y, std::vector<int32_t> dims, bool indices = false) {
    ProgramTensor pt = activation_record(ir_y, indices ? DType::kInt32 : dtype_of(ir_y));
    pt.name += ".unordered";
    pt.dims = std::move(dims);
    pt.logical_shape.assign(pt.dims.begin(), pt.dims.end());
    pt.layout = Layout::kPlain;
    pt.ir_tensor = -1;
    return p_.add_tensor(std::move(pt));
  }

  // Makes IR tensor `ir_y` from `result`, a tensor holding y's logical dims in `order`.
  void define_output(const Op& op, int ir_y, int result, const std::vector<int>& order) {
    const Tensor& y = tensor(ir_y);
    const std::vector<int> phys = physical_order(layout_of(y), y.shape.size());
    std::vector<int> perm;
    for (int d : phys) perm.push_back(int(std::find(order.begin(), order.end(), d) - order.begin()));
    program_of_[ir_y] = perm.empty() ? alias(result, y.name, physical_dims(y), ir_y)
                                     : permute_or_alias(op, result, perm, y.name, ir_y);
  }

  // Per logical dim of the output: source index start + floor(o * num / den) into the input
  // (rank-extended with leading 1s), and the fill for indices outside it.
  struct Gather {
    explicit Gather(size_t rank) : start(rank, 0), num(rank, 1), den(rank, 1) {}
    std::vector<int64_t> start, num, den;
    int32_t fill = 0;
  };

  // Broadcasting `from` to `to` (NumPy rules): size-1 dims repeat.
  static Gather broadcast_gather(Shape from, const Shape& to) {
    from.insert(from.begin(), to.size() - from.size(), 1);
    Gather g(to.size());
    for (size_t d = 0; d < to.size(); ++d) g.num[d] = from[d] == to[d] ? 1 : 0;
    return g;
  }

  // A program tensor holding IR tensor `x_ir` (rank-extended to `like`'s rank) in the
  // physical dim order of `like`: a view, or a permuted copy.
  int in_layout_of(const Op& op, int x_ir, const Tensor& like) {
    const Tensor& x = tensor(x_ir);
    const size_t rank = like.shape.size();
    if (x.shape.size() == rank && layout_of(x) == layout_of(like)) return activation(x_ir);
    Shape extended = x.shape;
    extended.insert(extended.begin(), rank - x.shape.size(), 1);
    const int logical = reordered(op, x_ir, identity_order(x.shape.size()));
    const int view = alias(logical, x.name + ".extended", dims_in_order(extended, identity_order(rank)));
    return permute_or_alias(op, view, physical_order(layout_of(like), rank), x.name + ".reordered", -1);
  }

  // strided_copy from `in` (x's data in `like`'s dim order) to `out`, shaped like `like`.
  // int16 elements move as byte pairs (an innermost dim of 2 copied whole); their fill must then
  // be 0, whose bytes are equal.
  void emit_gather(const Op& op, int in, int out, Shape x_shape, const Tensor& like, const Gather& g) {
    const bool pairs = p_.tensors[out].dtype == DType::kInt16;
    const size_t rank = like.shape.size();
    if (pairs && (rank >= k::kMaxRank || g.fill != 0))
      fail(op, "internal: an int16 copy of rank " + std::to_string(rank) + " filled with " + std::to_string(g.fill));
    x_shape.insert(x_shape.begin(), rank - x_shape.size(), 1);
    const std::vector<int> phys = physical_order(layout_of(like), rank);
    k::StridedCopyParams p{};
    const int lead = int(k::kMaxRank) - int(rank) - (pairs ? 1 : 0);
    for (int d = 0; d < int(k::kMaxRank); ++d) {
      const bool pair_dim = pairs && d == int(k::kMaxRank) - 1;
      const int logical = d < lead || pair_dim ? -1 : phys[size_t(d - lead)];
      const int32_t whole = pair_dim ? 2 : 1;
      p.in_dims[d] = logical < 0 ? whole : int32_t(x_shape[size_t(logical)]);
      p.out_dims[d] = logical < 0 ? whole : int32_t(like.shape[size_t(logical)]);
      p.start[d] = logical < 0 ? 0 : int32_t(g.start[size_t(logical)]);
      p.num[d] = logical < 0 ? 1 : int32_t(g.num[size_t(logical)]);
      p.den[d] = logical < 0 ? 1 : int32_t(g.den[size_t(logical)]);
    }
    p.fill = g.fill;
    const bool bytes = p_.tensors[out].dtype == DType::kInt8 || pairs;
    emit(bytes ? KernelId::strided_copy_b8 : KernelId::strided_copy_b32, {in}, {out}, params_bytes(p), &op);
  }

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

  // IR activation `x_ir` broadcast to the shape and layout of `y` (its own quantization).
  int broadcast_to(const Op& op, int x_ir, const Tensor& y) {
    const Tensor& x = tensor(x_ir);
    ProgramTensor pt = activation_record(x_ir, dtype_of(x_ir));
    pt.name = x.name + ".broadcast";
    pt.dims = physical_dims(y);
    pt.logical_shape = y.shape;
    pt.layout = layout_of(y);
    pt.ir_tensor = -1;
    const int in = in_layout_of(op, x_ir, y);
    const int out = p_.add_tensor(std::move(pt));
    emit_gather(op, in, out, x.shape, y, broadcast_gather(x.shape, y.shape));
    return out;
  }

  // The two operands of an element-wise kernel that reads its first operand as an activation
  // of the output's shape and broadcasts its second by in2_mode (BinaryParams): other
  // broadcasts are copies, a constant second operand is expanded now when the kernel cannot
  // broadcast it and stored in the first operand's element type (int8: by its spec). A
  // commutative op takes a constant second, and of two activations the one of the output's
  // shape first (`swapped` says the operands changed places).
  struct BinaryOperands {
    int a_ir, b_ir;    // IR tensors
    int a, b;          // program tensors
    int mode;          // in2_mode
    int32_t outer, inner;
    Quant b_quant;     // int8: the second operand's spec
    bool swapped = false;
  };

  // Int8 codes for a constant operand, chosen by the caller (an exact comparison), in the
  // constant's logical order, and their spec.
  struct ConstantCodes {
    std::vector<float> codes;
    Quant spec;
  };

  BinaryOperands binary_operands(const Op& op, bool commutative, const ConstantCodes* b_codes = nullptr) {
    BinaryOperands o{op.inputs[0], op.inputs[1], -1, -1, 0, 0, 0, {}};
    const Tensor& y = tensor(op.outputs[0]);
    if (commutative) {
      const Tensor &first = tensor(o.a_ir), &second = tensor(o.b_ir);
      if (first.constant || (!second.constant && first.shape != y.shape && second.shape == y.shape)) {
        std::swap(o.a_ir, o.b_ir);
        o.swapped = true;
      }
    }
    const Tensor& a = tensor(o.a_ir);
    const Tensor& b = tensor(o.b_ir);
    if (a.constant && !commutative)
      fail(op, "constant first operand of a subtraction (the front end sends c - x as neg and add)");
    if (a.constant) fail(op, "both operands are constants (constant folding computes such ops)");
    o.mode = broadcast_mode(b, y);
    std::vector<float> b_data = b_codes ? b_codes->codes : b.data;
    if (o.mode < 0 && b.constant) {
      const std::vector<float> values = b_data;
      b_data.resize(size_t(y.numel()));
      for (int64_t i = 0; i < y.numel(); ++i) b_data[size_t(i)] = values[size_t(broadcast_index(y.shape, b.shape, i))];
      o.mode = 0;
    }
    auto matches = [&](const Tensor& t) { return t.shape == y.shape && layout_of(t) == layout_of(y); };
    o.a = matches(a) ? activation(o.a_ir) : broadcast_to(op, o.a_ir, y);
    if (o.mode < 0 || (o.mode == 0 && !b.constant && !matches(b))) {
      o.b = broadcast_to(op, o.b_ir, y);
      o.mode = 0;
    }
    const std::vector<int32_t> y_dims = physical_dims(y);
    o.inner = o.mode == 1 ? y_dims.back() : int32_t(y.numel());
    o.outer = int32_t(y.numel() / o.inner);
    o.b_quant = b.quant;
    if (b.constant) {
      const std::vector<float> phys = o.mode == 0 ? to_physical(b_data, y.shape, layout_of(y)) : b_data;
      // A full-size constant keeps the output's dims: flat, it could exceed the format's dim limit.
      const std::vector<int32_t> dims = o.mode == 0 ? y_dims : std::vector<int32_t>{int32_t(phys.size())};
      const DType dtype = p_.tensors[o.a].dtype;
      if (dtype == DType::kInt8 || dtype == DType::kInt16) {
        o.b_quant = b_codes ? b_codes->spec : spec_of(b);
        std::vector<int64_t> codes;
        if (b_codes) {
          for (float c : phys) codes.push_back(int64_t(c));  // already the int8 codes
        } else {
          codes = quantize_values(phys, o.b_quant);
        }
        o.b = add_constant_tensor(p_, b.name, dtype, dims, quantized_bytes(codes, dtype));
      } else {
        o.b = constant(b.name, DType::kFloat32, dims, phys);
      }
    } else if (o.b < 0) {
      o.b = activation(o.b_ir);
    }
    return o;
  }

  // A copy of quantized tensor `in` requantized from `from` to `to` (int8 to int8, or between
  // int8 and int16).
  int requantized(const Op& op, int in, const Quant& from, const Quant& to) {
    const DType in_type = quantized_dtype(from), out_type = quantized_dtype(to);
    if (in_type == DType::kInt16 && out_type == DType::kInt16) fail(op, "internal: an int16 to int16 requantization");
    ProgramTensor pt = derived_record(in);
    pt.name += ".requantized";
    pt.alias_of = -1;
    pt.ir_tensor = -1;
    pt.streamed = false;  // a copy of a streamed input is an arena tensor (derived_record: of a state)
    pt.bytes.clear();
    pt.dtype = out_type;
    pt.scale = to.scale;
    pt.zero_point = to.zero_point;
    const int out = p_.add_tensor(std::move(pt));
    k::RequantizeParams r{};
    r.n = int32_t(element_count(p_.tensors[out].dims));
    r.input_offset = -from.zero_point;
    r.output_offset = to.zero_point;
    const QuantizedMultiplier m = quantize_multiplier(double(from.scale) / to.scale);
    r.multiplier = m.multiplier;
    r.shift = m.shift;
    r.act_min = int32_t(to.type_min());
    r.act_max = int32_t(to.type_max());
    const KernelId kernel = in_type == DType::kInt16   ? KernelId::requantize_s16_s8
                            : out_type == DType::kInt16 ? KernelId::requantize_s8_s16
                                                        : KernelId::requantize_s8;
    emit(kernel, {in}, {out}, params_bytes(r), &op);
    return out;
  }

  static int64_t element_count(const std::vector<int32_t>& dims) {
    return std::accumulate(dims.begin(), dims.end(), int64_t{1}, std::multiplies<int64_t>());
  }

  // The conversions between float32 and quantized tensors of `dtype` (int8 or int16).
  static KernelId quantize_kernel(DType dtype) {
    return dtype == DType::kInt16 ? KernelId::quantize_f32_s16 : KernelId::quantize_f32_s8;
  }
  static KernelId dequantize_kernel(DType dtype) {
    return dtype == DType::kInt16 ? KernelId::dequantize_s16_f32 : KernelId::dequantize_s8_f32;
  }

  LoweringState& s_;
  const Graph& g_;
  const LowerOptions& o_;
  LoweredProgram& p_;
  std::vector<int>& program_of_;
  bool& float_fallback_;
  std::string& fallback_reason_;
};

// OpDef::lower and OpDef::int8_rejection of a family: `method` of its Lowering class.
template <class Family, void (Family::*method)(const Op&)>
void lower_with(Lowering& l, const Op& op) {
  (Family(l.state()).*method)(op);
}

template <class Family, std::string (Family::*method)(const Op&) const>
std::string int8_rejection_of(Lowering& l, const Op& op) {
  return (Family(l.state()).*method)(op);
}

}  // namespace mcuflow::compiler
