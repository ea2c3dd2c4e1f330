#include "mcuflow/compiler/lower.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>

#include "mcuflow/compiler/quant_math.h"
#include "mcuflow/compiler/quantizer.h"
#include "mcuflow/kernels/params.h"

namespace mcuflow::compiler {
namespace {

using format::DType;
using format::Layout;
namespace k = mcuflow::kernels;

[[noreturn]] void fail(const Op& op, const std::string& why) { throw CompileError(op.where() + ": " + why); }

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
int32_t quantized_bound(float real, const Quant& q, bool upper) {
  if (std::isinf(real)) return int32_t(upper ? q.type_max() : q.type_min());
  const double v = std::round(double(real) / q.scale) + q.zero_point;
  return int32_t(std::clamp(v, double(q.type_min()), double(q.type_max())));
}

// The bounds an unquantized (float) kernel's params carry in their unused integer fields.
const Quant kUnquantized{};

// A tensor's spec, which int8 lowering requires the quantizer to have assigned.
const Quant& spec_of(const Tensor& t) {
  if (!t.quant.valid) throw CompileError("tensor " + t.name + " has no quantization (the quantizer assigns it)");
  return t.quant;
}

// Quantized constant values in the element type the kernel reads.
template <typename T>
std::vector<T> narrowed(const std::vector<int32_t>& values) {
  return std::vector<T>(values.begin(), values.end());
}

// values[from[i]] at each i: constant data rearranged into a kernel's layout.
template <typename T>
std::vector<T> gathered(const std::vector<T>& values, const std::vector<size_t>& from) {
  std::vector<T> out(from.size());
  for (size_t i = 0; i < from.size(); ++i) out[i] = values[from[i]];
  return out;
}

// A constant's data quantized by its spec, in logical order.
std::vector<int32_t> quantized(const Tensor& t) { return quantize_values(t.data, spec_of(t), t.shape); }

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
    default: return std::fabs(x);
  }
}

bool is_trivial_permutation(const std::vector<int>& perm, const std::vector<int32_t>& in_dims) {
  int last = -1;
  for (int p : perm) {
    if (in_dims[p] == 1) continue;
    if (p < last) return false;
    last = p;
  }
  return true;
}

class Lowering {
 public:
  Lowering(const Graph& g, const LowerOptions& o) : g_(g), o_(o), program_of_(g.tensors.size(), -1) {}

  LoweredProgram run() {
    p_.precision = int8() ? "int8" : "fp32";
    if (!int8()) p_.flags |= format::kFlagFloatPrecision;
    if (int8() && o_.int8_io) p_.flags |= format::kFlagInt8Io;
    for (int t : g_.inputs) lower_input(t);
    for (const Op& op : g_.ops) lower_op(op);
    for (int t : g_.outputs) lower_output(t);
    return std::move(p_);
  }

 private:
  // In an int8 program, an op without a usable int8 kernel runs in float (lower_as_float).
  bool int8() const { return o_.precision == Precision::kInt8 && !float_fallback_; }
  DType act_dtype() const { return int8() ? DType::kInt8 : DType::kFloat32; }

  static Layout layout_of(const Tensor& t) {
    if (!t.nhwc) return Layout::kPlain;
    return t.shape.size() == 4 ? Layout::kNhwc : Layout::kFlatNhwc;
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
    if (dtype == DType::kInt8) {
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
    if (int8() && !t.quant.valid) throw CompileError("tensor " + t.name + " has no quantization (not reached by calibration)");
    program_of_[ir] = p_.add_tensor(activation_record(ir, act_dtype()));
    return program_of_[ir];
  }

  template <typename T>
  int constant(const std::string& name, DType dtype, std::vector<int32_t> dims, const std::vector<T>& values) {
    ProgramTensor pt;
    pt.name = name;
    pt.dtype = dtype;
    pt.dims = std::move(dims);
    pt.logical_shape.assign(pt.dims.begin(), pt.dims.end());
    pt.constant = true;
    pt.bytes = raw_bytes(values);
    return p_.add_tensor(std::move(pt));
  }

  int alias(int root, const std::string& name, std::vector<int32_t> dims, int ir = -1) {
    ProgramTensor pt = p_.tensors[root];
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
    pop.ir_kind = op ? op->kind : kernel == KernelId::quantize_f32_s8 ? "quantize_input" : "dequantize_output";
    pop.fallback = fallback_reason_;
    pop.source = op ? op->source : "";
    pop.macs = macs;
    p_.ops.push_back(std::move(pop));
  }

  // --- I/O ---

  void lower_input(int ir) {
    const Tensor& t = tensor(ir);
    if (!int8() || o_.int8_io) {
      p_.inputs.push_back(activation(ir));
      return;
    }
    ProgramTensor f = activation_record(ir, DType::kFloat32);
    f.name = t.name;
    f.ir_tensor = -1;
    const int float_in = p_.add_tensor(std::move(f));
    p_.inputs.push_back(float_in);
    const int q = activation(ir);
    p_.tensors[q].name = t.name + ".int8";
    k::QuantizeParams qp{int32_t(t.numel()), t.quant.scale, t.quant.zero_point};
    emit(KernelId::quantize_f32_s8, {float_in}, {q}, params_bytes(qp), nullptr);
  }

  void lower_output(int ir) {
    const Tensor& t = tensor(ir);
    if (t.constant) throw CompileError("model output " + t.name + " is a constant; nothing to compute");
    const int q = activation(ir);
    if (!int8() || o_.int8_io || p_.tensors[q].dtype == DType::kInt32) {
      p_.outputs.push_back(q);
      return;
    }
    ProgramTensor f = activation_record(ir, DType::kFloat32);
    f.name = t.name + ".float";
    f.ir_tensor = -1;
    const int float_out = p_.add_tensor(std::move(f));
    k::QuantizeParams qp{int32_t(t.numel()), t.quant.scale, t.quant.zero_point};
    emit(KernelId::dequantize_s8_f32, {q}, {float_out}, params_bytes(qp), nullptr);
    p_.outputs.push_back(float_out);
  }

  // --- ops ---

  void lower_op(const Op& op) {
    if (!int8()) return lower_op_kernels(op);
    const std::string why = int8_rejection(op);
    if (why.empty()) return lower_op_kernels(op);
    if (!o_.allow_fallback) fail(op, "no int8 kernel: " + why + " (float fallback is disabled)");
    lower_as_float(op, why);
  }

  // The op's "dim" attribute for a tensor of `rank` dims, negative values counted from the end
  // (shape inference has checked the range).
  static size_t dim_of(const Op& op, size_t rank) {
    const int64_t dim = op.int_attr("dim");
    return size_t(dim < 0 ? dim + int64_t(rank) : dim);
  }

  // Why `op` cannot run on an int8 kernel ("" when it can).
  std::string int8_rejection(const Op& op) const {
    if (op.kind == "layer_norm" || op.kind == "group_norm") return norm_tables(op, norm_layout(op).params).problem;
    if (op.kind == "softmax") {
      const Shape& x = tensor(op.inputs[0]).shape;
      if (const int64_t depth = x[dim_of(op, x.size())]; depth > k::kSoftmaxMaxDepthS8)
        return "softmax over " + std::to_string(depth) + " values exceeds " + std::to_string(k::kSoftmaxMaxDepthS8) +
               " (the int8 kernel's 32-bit sum could wrap)";
    }
    if (op.kind == "matmul" && tensor(op.inputs[0]).shape.back() > k::kBatchMatmulMaxDepthS8)
      return "matmul depth " + std::to_string(tensor(op.inputs[0]).shape.back()) + " exceeds " +
             std::to_string(k::kBatchMatmulMaxDepthS8) + " (the int32 accumulator could overflow)";
    return "";
  }

  // The op on its float32 kernel between a dequantize of each activation input and a quantize
  // of its output (the portable path), each emitted op carrying the reason.
  void lower_as_float(const Op& op, const std::string& why) {
    fallback_reason_ = why;
    std::vector<std::pair<int, int>> int8_of;  // IR tensor -> its int8 program tensor
    for (int ir : op.inputs) {
      const Tensor& t = tensor(ir);
      if (t.constant || std::any_of(int8_of.begin(), int8_of.end(), [&](auto& e) { return e.first == ir; })) continue;
      const int q = activation(ir);
      ProgramTensor f = activation_record(ir, DType::kFloat32);
      f.name = t.name + ".dequantized";
      f.ir_tensor = -1;
      f.dims = p_.tensors[q].dims;
      const int fid = p_.add_tensor(std::move(f));
      k::QuantizeParams qp{int32_t(t.numel()), t.quant.scale, t.quant.zero_point};
      emit(KernelId::dequantize_s8_f32, {q}, {fid}, params_bytes(qp), &op);
      int8_of.push_back({ir, q});
      program_of_[ir] = fid;
    }
    float_fallback_ = true;
    lower_op_kernels(op);
    float_fallback_ = false;
    const int y_ir = op.outputs[0];
    const int f_out = program_of_[y_ir];
    p_.tensors[f_out].ir_tensor = -1;
    p_.tensors[f_out].name = tensor(y_ir).name + ".float";
    program_of_[y_ir] = -1;
    for (const auto& [ir, q] : int8_of) program_of_[ir] = q;
    const Tensor& y = tensor(y_ir);
    k::QuantizeParams qp{int32_t(y.numel()), y.quant.scale, y.quant.zero_point};
    emit(KernelId::quantize_f32_s8, {f_out}, {activation(y_ir)}, params_bytes(qp), &op);
    fallback_reason_.clear();
  }

  void lower_op_kernels(const Op& op) {
    if (op.kind == "conv2d") return lower_conv(op);
    if (op.kind == "linear") return lower_linear(op);
    if (op.kind == "add" || op.kind == "mul" || op.kind == "sub" || op.kind == "minimum" || op.kind == "maximum")
      return lower_binary(op);
    if (op.kind == "max_pool2d" || op.kind == "avg_pool2d") return lower_pool(op);
    if (op.kind == "adaptive_avg_pool2d" || is_spatial_mean(op)) return lower_global_pool(op);
    if (op.kind == "mean" || op.kind == "sum" || op.kind == "amax") return lower_reduce(op);
    if (op.kind == "argmax") return lower_argmax(op);
    if (activation_function(op.kind) >= 0) return lower_activation(op);
    if (op.kind == "pad" || op.kind == "slice" || op.kind == "expand" || op.kind == "upsample_nearest2d")
      return lower_strided_copy(op);
    if (op.kind == "input_rows") return lower_input_rows(op);
    if (op.kind == "conv_transpose2d") return lower_conv_transpose(op);
    if (op.kind == "matmul") return lower_matmul(op);
    if (op.kind == "layer_norm" || op.kind == "group_norm") return lower_norm(op);
    if (op.kind == "softmax") return lower_softmax(op);
    if (op.kind == "relu" || op.kind == "clamp") return lower_clamp(op);
    if (op.kind == "cat") return lower_cat(op);
    if (op.kind == "prelu") return lower_prelu(op);
    if (op.kind == "upsample_bilinear2d") return lower_upsample_bilinear(op);
    if (op.kind == "reshape") return lower_reshape(op);
    if (op.kind == "permute") return lower_permute(op);
    if (op.kind == "identity") {
      const int in = activation(op.inputs[0]);
      program_of_[op.outputs[0]] = alias(in, tensor(op.outputs[0]).name, p_.tensors[in].dims, op.outputs[0]);
      return;
    }
    fail(op, "no lowering for this op");
  }

  void require_batch1(const Op& op, const Tensor& x) {
    if (x.shape[0] != 1) fail(op, "batch size " + std::to_string(x.shape[0]) + " in the exported graph; export with batch size 1 (mcuflow iterates batches)");
  }

  template <typename P>
  void fill_activation(P& p, const Op& op, const Tensor& y) {
    p.act_min = int8() ? quantized_bound(op.act_min, y.quant, false) : int32_t(kUnquantized.type_min());
    p.act_max = int8() ? quantized_bound(op.act_max, y.quant, true) : int32_t(kUnquantized.type_max());
    p.act_min_f = std::isinf(op.act_min) ? -3.4e38f : op.act_min;
    p.act_max_f = std::isinf(op.act_max) ? 3.4e38f : op.act_max;
  }

  // The int32 bias (quantized by its spec; 0 without one) of `channels` outputs, and the
  // multipliers and shifts (per output channel, or one for per-tensor weights) of input x
  // weight products to the output. `reduction` (products summed per output) bounds the
  // accumulator: the bias is clamped so bias + accumulator always fits int32 (the verifier
  // requires it).
  void requant_tables(const Op& op, const Tensor& x, const Tensor& w, const Tensor& y, int32_t channels,
                      int64_t reduction, int& bias_id, int& mult_id, int& shift_id) {
    const Quant& wq = spec_of(w);
    // |x - zero point| < 2^bits(x), |w| <= 2^(bits(w) - 1)
    const double max_product = double(x.quant.type_max() - x.quant.type_min()) * double(-wq.type_min());
    const double bias_limit = double(std::numeric_limits<int32_t>::max()) - double(reduction) * max_product;
    std::vector<int32_t> b(size_t(channels), 0);
    if (op.inputs.size() > 2) {
      b = quantized(tensor(op.inputs[2]));
      for (int32_t& v : b) v = int32_t(std::clamp(double(v), -bias_limit, bias_limit));
    }
    const size_t scales = wq.per_axis() ? wq.scales.size() : 1;
    std::vector<int32_t> m(scales), s(scales);
    for (size_t c = 0; c < scales; ++c) {
      const QuantizedMultiplier qm = quantize_multiplier(double(x.quant.scale) * wq.scale_at(c) / y.quant.scale);
      m[c] = qm.multiplier;
      s[c] = qm.shift;
    }
    const std::string& name = w.name;
    bias_id = constant(name + ".bias", DType::kInt32, {int32_t(b.size())}, b);
    mult_id = constant(name + ".multipliers", DType::kInt32, {int32_t(m.size())}, m);
    shift_id = constant(name + ".shifts", DType::kInt32, {int32_t(s.size())}, s);
  }

  std::vector<float> bias_of(const Op& op, int64_t channels) const {
    if (op.inputs.size() > 2) return tensor(op.inputs[2]).data;
    return std::vector<float>(size_t(channels), 0.0f);
  }

  void lower_conv(const Op& op) {
    const Tensor& x = tensor(op.inputs[0]);
    const Tensor& w = tensor(op.inputs[1]);
    const Tensor& y = tensor(op.outputs[0]);
    require_batch1(op, x);
    const int64_t groups = op.int_attr("groups");
    const int32_t out_c = int32_t(w.shape[0]), in_c = int32_t(x.shape[1]);
    const int32_t kh = int32_t(w.shape[2]), kw = int32_t(w.shape[3]);
    auto pair = [&](const char* name) {
      auto v = op.ints_attr(name);
      if (v.size() == 1) v.push_back(v[0]);
      return v;
    };
    const auto stride = pair("stride"), pad = pair("padding"), dil = pair("dilation");
    const bool depthwise = groups != 1;
    const int64_t macs = y.numel() * kh * kw * (depthwise ? 1 : in_c);

    // Weights to the device layout: OHWI for conv, [KH][KW][O] for depthwise.
    const size_t per_out = size_t(kh) * kw * (depthwise ? 1 : in_c);
    std::vector<size_t> device_from_logical(w.data.size());
    for (int32_t o = 0; o < out_c; ++o)
      for (int32_t ky = 0; ky < kh; ++ky)
        for (int32_t kx = 0; kx < kw; ++kx)
          for (int32_t i = 0; i < (depthwise ? 1 : in_c); ++i) {
            const size_t logical = ((size_t(o) * (depthwise ? 1 : in_c) + i) * kh + ky) * kw + kx;
            if (depthwise) device_from_logical[(size_t(ky) * kw + kx) * out_c + o] = logical;
            else device_from_logical[((size_t(o) * kh + ky) * kw + kx) * in_c + i] = logical;
          }

    const int in = activation(op.inputs[0]);
    const int out = activation(op.outputs[0]);
    const std::string name = w.name;
    const std::vector<int32_t> w_dims = depthwise ? std::vector<int32_t>{kh, kw, out_c}
                                                  : std::vector<int32_t>{out_c, kh, kw, in_c};
    auto fill_window = [&](auto& p) {
      p.in_h = int32_t(x.shape[2]); p.in_w = int32_t(x.shape[3]); p.in_c = in_c;
      p.out_h = int32_t(y.shape[2]); p.out_w = int32_t(y.shape[3]); p.out_c = out_c;
      p.k_h = kh; p.k_w = kw;
      p.stride_h = int32_t(stride[0]); p.stride_w = int32_t(stride[1]);
      p.pad_top = int32_t(pad[0]); p.pad_left = int32_t(pad[1]);
      p.dil_h = int32_t(dil[0]); p.dil_w = int32_t(dil[1]);
      p.input_offset = int8() ? -x.quant.zero_point : 0;
      p.output_offset = int8() ? y.quant.zero_point : 0;
      fill_activation(p, op, y);
    };
    std::vector<uint8_t> params;
    if (depthwise) {
      k::DwConvParams p{};
      fill_window(p);
      p.ch_mult = out_c / in_c;
      params = params_bytes(p);
    } else {
      k::ConvParams p{};
      fill_window(p);
      params = params_bytes(p);
    }
    if (!int8()) {
      const int wid = constant(name, DType::kFloat32, w_dims, gathered(w.data, device_from_logical));
      const int bid = constant(name + ".bias", DType::kFloat32, {out_c}, bias_of(op, out_c));
      emit(depthwise ? KernelId::dwconv_f32 : KernelId::conv_f32, {in, wid, bid}, {out}, params, &op, macs);
      return;
    }
    int bid, mid, sid;
    requant_tables(op, x, w, y, out_c, int64_t(per_out), bid, mid, sid);
    const int wid = constant(name, DType::kInt8, w_dims, narrowed<int8_t>(gathered(quantized(w), device_from_logical)));
    emit(depthwise ? KernelId::dwconv_s8 : KernelId::conv_s8, {in, wid, bid, mid, sid}, {out}, params, &op, macs);
  }

  void lower_linear(const Op& op) {
    const Tensor& x = tensor(op.inputs[0]);
    const Tensor& w = tensor(op.inputs[1]);
    const Tensor& y = tensor(op.outputs[0]);
    const int32_t out_c = int32_t(w.shape[0]), in_c = int32_t(w.shape[1]);
    k::FcParams p{};
    p.rows = int32_t(x.numel() / in_c);
    p.in_c = in_c;
    p.out_c = out_c;
    p.per_channel = int8() && w.quant.per_axis() ? 1 : 0;
    p.input_offset = int8() ? -x.quant.zero_point : 0;
    p.output_offset = int8() ? y.quant.zero_point : 0;
    fill_activation(p, op, y);
    // A 4-D input is NHWC on device; the product runs over the logical last dim.
    const bool image = layout_of(x) == Layout::kNhwc;
    const int in = image ? reordered(op, op.inputs[0], identity_order(x.shape.size())) : activation(op.inputs[0]);
    const int out = image ? scratch(op.outputs[0], logical_dims(y)) : activation(op.outputs[0]);
    const int64_t macs = int64_t(p.rows) * in_c * out_c;
    if (!int8()) {
      const int wid = constant(w.name, DType::kFloat32, {out_c, in_c}, w.data);
      const int bid = constant(w.name + ".bias", DType::kFloat32, {out_c}, bias_of(op, out_c));
      emit(KernelId::fc_f32, {in, wid, bid}, {out}, params_bytes(p), &op, macs);
    } else {
      int bid, mid, sid;
      requant_tables(op, x, w, y, out_c, in_c, bid, mid, sid);
      const int wid = constant(w.name, DType::kInt8, {out_c, in_c}, narrowed<int8_t>(quantized(w)));
      emit(KernelId::fc_s8, {in, wid, bid, mid, sid}, {out}, params_bytes(p), &op, macs);
    }
    if (image) define_output(op, op.outputs[0], out, identity_order(y.shape.size()));
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

  void lower_binary(const Op& op) {
    int a_id = op.inputs[0], b_id = op.inputs[1];
    const Tensor& y = tensor(op.outputs[0]);
    // The kernels read their first operand as an activation and broadcast their second per
    // channel or as a scalar; other broadcasts are copies. All ops but sub are commutative: a
    // constant goes second, and of two activations the one of the output's shape goes first.
    if (op.kind != "sub") {
      const Tensor &first = tensor(a_id), &second = tensor(b_id);
      if (first.constant || (!second.constant && first.shape != y.shape && second.shape == y.shape))
        std::swap(a_id, b_id);
    }
    const Tensor& a = tensor(a_id);
    const Tensor& b = tensor(b_id);
    if (a.constant && op.kind == "sub")
      fail(op, "constant first operand of a subtraction (the front end sends c - x as neg and add)");
    if (a.constant) fail(op, "both operands are constants (constant folding computes such ops)");
    int mode = broadcast_mode(b, y);
    // A constant the kernel cannot broadcast is expanded now, to the output's shape.
    std::vector<float> b_data = b.data;
    if (mode < 0 && b.constant) {
      b_data.resize(size_t(y.numel()));
      for (int64_t i = 0; i < y.numel(); ++i) b_data[size_t(i)] = b.data[size_t(broadcast_index(y.shape, b.shape, i))];
      mode = 0;
    }
    // Operands in another shape or layout than the output are copied into it.
    auto matches = [&](const Tensor& t) { return t.shape == y.shape && layout_of(t) == layout_of(y); };
    const int aid = matches(a) ? activation(a_id) : broadcast_to(op, a_id, y);
    int bid = -1;
    if (mode < 0 || (mode == 0 && !b.constant && !matches(b))) {
      bid = broadcast_to(op, b_id, y);
      mode = 0;
    }

    k::BinaryParams p{};
    const std::vector<int32_t> y_dims = physical_dims(y);
    p.inner = mode == 1 ? y_dims.back() : int32_t(y.numel());
    p.outer = int32_t(y.numel() / p.inner);
    p.in2_mode = mode;
    fill_activation(p, op, y);

    Quant bq = b.quant;
    if (b.constant) {
      const std::vector<float> phys = mode == 0 ? to_physical(b_data, y.shape, layout_of(y)) : b_data;
      // A full-size constant keeps the output's dims: flat, it could exceed the format's dim limit.
      const std::vector<int32_t> dims = mode == 0 ? y_dims : std::vector<int32_t>{int32_t(phys.size())};
      if (int8()) {
        bq = spec_of(b);
        bid = constant(b.name, DType::kInt8, dims, narrowed<int8_t>(quantize_values(phys, bq)));
      } else {
        bid = constant(b.name, DType::kFloat32, dims, phys);
      }
    } else if (bid < 0) {
      bid = activation(b_id);
    }
    const int out = activation(op.outputs[0]);
    if (int8()) {
      p.input1_offset = -a.quant.zero_point;
      p.input2_offset = -bq.zero_point;
      p.output_offset = y.quant.zero_point;
      if (op.kind == "minimum" || op.kind == "maximum") {
        const QuantizedMultiplier m1 = quantize_multiplier(double(a.quant.scale) / y.quant.scale);
        const QuantizedMultiplier m2 = quantize_multiplier(double(bq.scale) / y.quant.scale);
        p.input1_multiplier = m1.multiplier;
        p.input1_shift = m1.shift;
        p.input2_multiplier = m2.multiplier;
        p.input2_shift = m2.shift;
      } else if (op.kind == "add" || op.kind == "sub") {
        const AddRescale r = add_rescale(a.quant.scale, bq.scale, y.quant.scale);
        p.left_shift = r.left_shift;
        p.input1_multiplier = r.input1.multiplier;
        p.input1_shift = r.input1.shift;
        p.input2_multiplier = r.input2.multiplier;
        p.input2_shift = r.input2.shift;
        p.output_multiplier = r.output.multiplier;
        p.output_shift = r.output.shift;
      } else {
        const QuantizedMultiplier m = mul_rescale(a.quant.scale, bq.scale, y.quant.scale);
        p.output_multiplier = m.multiplier;
        p.output_shift = m.shift;
      }
    }
    emit(binary_kernel(op.kind, int8()), {aid, bid}, {out}, params_bytes(p), &op);
  }

  static KernelId binary_kernel(const std::string& kind, bool int8) {
    if (kind == "add") return int8 ? KernelId::add_s8 : KernelId::add_f32;
    if (kind == "sub") return int8 ? KernelId::sub_s8 : KernelId::sub_f32;
    if (kind == "mul") return int8 ? KernelId::mul_s8 : KernelId::mul_f32;
    if (kind == "minimum") return int8 ? KernelId::minimum_s8 : KernelId::minimum_f32;
    return int8 ? KernelId::maximum_s8 : KernelId::maximum_f32;
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
    const Quant& q = int8() ? x.quant : kUnquantized;  // the output's too
    p.act_min = int32_t(q.type_min());
    p.act_max = int32_t(q.type_max());
    p.act_min_f = -3.4e38f;
    p.act_max_f = 3.4e38f;
    if (int8() && (x.quant.scale != y.quant.scale || x.quant.zero_point != y.quant.zero_point))
      fail(op, "pooling input and output must share quantization");
    const int in = activation(op.inputs[0]);
    const int out = activation(op.outputs[0]);
    const int64_t macs = int64_t(p.out_h) * p.out_w * p.c * kh * kw;
    if (padding_counts) {
      const k::AvgPoolIncludePadParams ip{p, int8() ? x.quant.zero_point : 0};
      emit(int8() ? KernelId::avgpool_include_pad_s8 : KernelId::avgpool_include_pad_f32, {in}, {out},
           params_bytes(ip), &op, macs);
      return;
    }
    const KernelId id = is_max ? (int8() ? KernelId::maxpool_s8 : KernelId::maxpool_f32)
                               : (int8() ? KernelId::avgpool_s8 : KernelId::avgpool_f32);
    emit(id, {in}, {out}, params_bytes(p), &op, macs);
  }

  void lower_pool(const Op& op) {
    auto pair = [&](const char* name, const std::vector<int64_t>& fallback) {
      auto v = op.has_attr(name) ? op.ints_attr(name) : fallback;
      if (v.empty()) v = fallback;
      if (v.size() == 1) v.push_back(v[0]);
      return v;
    };
    const auto kernel = pair("kernel", {});
    const auto stride = pair("stride", kernel);
    const auto pad = pair("padding", {0, 0});
    const auto pad_end = pair("padding_end", pad);
    const bool padded = pad[0] || pad[1] || pad_end[0] || pad_end[1];
    const bool padding_counts = op.kind == "avg_pool2d" && padded && op.has_attr("count_include_pad") &&
                                op.int_attr("count_include_pad") != 0;
    emit_pool(op, op.kind == "max_pool2d", int32_t(kernel[0]), int32_t(kernel[1]), int32_t(stride[0]),
              int32_t(stride[1]), int32_t(pad[0]), int32_t(pad[1]), padding_counts);
  }

  void lower_global_pool(const Op& op) {
    const Tensor& x = tensor(op.inputs[0]);
    const Tensor& y = tensor(op.outputs[0]);
    const int64_t oh = y.shape.size() == 4 ? y.shape[2] : 1, ow = y.shape.size() == 4 ? y.shape[3] : 1;
    const int32_t kh = int32_t(x.shape[2] / oh), kw = int32_t(x.shape[3] / ow);
    emit_pool(op, false, kh, kw, kh, kw, 0, 0);
  }

  void lower_softmax(const Op& op) {
    const Tensor& x = tensor(op.inputs[0]);
    k::SoftmaxParams p{};
    const int dim = int(dim_of(op, x.shape.size()));
    p.depth = int32_t(x.shape[size_t(dim)]);
    p.rows = int32_t(x.numel() / p.depth);
    if (int8()) {
      const SoftmaxRescale r = softmax_rescale(x.quant.scale);
      p.input_multiplier = r.input_multiplier;
      p.input_left_shift = r.input_left_shift;
      p.diff_min = r.diff_min;
    }
    // The kernel works on the last physical axis: the other dims keep x's physical order.
    std::vector<int> order;
    for (int d : physical_order(layout_of(x), x.shape.size())) {
      if (d != dim) order.push_back(d);
    }
    order.push_back(dim);
    const int in = reordered(op, op.inputs[0], order);
    const int out = scratch(op.outputs[0], dims_in_order(x.shape, order));
    emit(int8() ? KernelId::softmax_s8 : KernelId::softmax_f32, {in}, {out}, params_bytes(p), &op);
    define_output(op, op.outputs[0], out, order);
  }

  void lower_clamp(const Op& op) {
    const Tensor& x = tensor(op.inputs[0]);
    const Tensor& y = tensor(op.outputs[0]);
    const float lo = op.kind == "relu" ? 0.0f : float(op.float_attr("min"));
    const float hi = op.kind == "relu" ? 3.4e38f : float(op.float_attr("max"));
    k::ClampParams p{};
    p.n = int32_t(x.numel());
    if (int8()) {
      p.act_min = quantized_bound(lo, y.quant, false);
      p.act_max = quantized_bound(hi >= 3.4e38f ? INFINITY : hi, y.quant, true);
    }
    p.act_min_f = lo;
    p.act_max_f = hi;
    const int in = activation(op.inputs[0]);
    const int out = activation(op.outputs[0]);
    if (int8() && (x.quant.scale != y.quant.scale || x.quant.zero_point != y.quant.zero_point)) {
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
    emit(int8() ? KernelId::clamp_s8 : KernelId::clamp_f32, {in}, {out}, params_bytes(p), &op);
  }

  void lower_cat(const Op& op) {
    const Tensor& y = tensor(op.outputs[0]);
    const int64_t logical_dim = int64_t(dim_of(op, y.shape.size()));
    const auto order = physical_order(layout_of(y), y.shape.size());
    const auto axis = size_t(std::find(order.begin(), order.end(), int(logical_dim)) - order.begin());
    const std::vector<int32_t> y_dims = physical_dims(y);
    int64_t outer = 1, after = 1;
    for (size_t d = 0; d < axis; ++d) outer *= y_dims[d];
    for (size_t d = axis + 1; d < y_dims.size(); ++d) after *= y_dims[d];
    const int out = activation(op.outputs[0]);
    int64_t offset = 0;
    for (int input : op.inputs) {
      const Tensor& x = tensor(input);
      if (!x.constant && x.nhwc != y.nhwc) fail(op, "inputs have different layouts");
      k::ConcatSliceParams p{};
      p.outer = int32_t(outer);
      p.in_c = int32_t(x.shape[logical_dim] * after);
      p.out_c = int32_t(y.shape[logical_dim] * after);
      p.offset_c = int32_t(offset);
      offset += p.in_c;
      if (int8() && !x.constant && (x.quant.scale != y.quant.scale || x.quant.zero_point != y.quant.zero_point)) {
        const QuantizedMultiplier m = quantize_multiplier(double(x.quant.scale) / y.quant.scale);
        p.requantize = 1;
        p.input_offset = -x.quant.zero_point;
        p.output_offset = y.quant.zero_point;
        p.multiplier = m.multiplier;
        p.shift = m.shift;
      }
      emit(int8() ? KernelId::concat_slice_s8 : KernelId::concat_slice_f32,
           {x.constant ? cat_constant(x, y) : activation(input)}, {out}, params_bytes(p), &op);
    }
  }

  // A constant piece of a cat (a class token) in the output's layout and quantization, so
  // the copy into the output needs no requantization.
  int cat_constant(const Tensor& x, const Tensor& y) {
    std::vector<int32_t> dims;
    for (int d : physical_order(layout_of(y), x.shape.size())) dims.push_back(int32_t(x.shape[size_t(d)]));
    const std::vector<float> phys = to_physical(x.data, x.shape, layout_of(y));
    if (!int8()) return constant(x.name, DType::kFloat32, dims, phys);
    return constant(x.name + ".int8", DType::kInt8, dims, narrowed<int8_t>(quantize_values(phys, spec_of(x))));
  }

  // A physical permutation from `in` (program tensor) to a new tensor with dims `out_dims`,
  // or a view when the permutation only moves size-1 dims.
  int permute_or_alias(const Op& op, int in, const std::vector<int>& perm, const std::string& name, int ir) {
    const std::vector<int32_t> in_dims = p_.tensors[in].dims;  // copy: add_tensor below reallocates
    std::vector<int32_t> out_dims;
    for (int d : perm) out_dims.push_back(in_dims[d]);
    if (is_trivial_permutation(perm, in_dims)) return alias(in, name, out_dims, ir);
    ProgramTensor pt = p_.tensors[in];
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
    k::PermuteParams p{};
    const int pad = int(k::kMaxRank) - int(in_dims.size());
    for (int d = 0; d < int(k::kMaxRank); ++d) {
      p.in_dims[d] = d < pad ? 1 : in_dims[d - pad];
      p.perm[d] = d < pad ? d : perm[d - pad] + pad;
    }
    const bool bytes1 = p_.tensors[in].dtype == DType::kInt8;
    emit(bytes1 ? KernelId::permute_b8 : KernelId::permute_b32, {in}, {out}, params_bytes(p), &op);
    return out;
  }

  void lower_reshape(const Op& op) {
    const Tensor& x = tensor(op.inputs[0]);
    const Tensor& y = tensor(op.outputs[0]);
    int in = activation(op.inputs[0]);
    if (int8() && (x.quant.scale != y.quant.scale || x.quant.zero_point != y.quant.zero_point))
      fail(op, "reshape input and output must share quantization");
    const Layout ly = layout_of(y);
    if (ly == Layout::kFlatNhwc) {  // flatten folded into the following linear layers
      program_of_[op.outputs[0]] = alias(in, y.name, physical_dims(y), op.outputs[0]);
      return;
    }
    // Bring the input to logical order, view it with the new shape, then to the output layout.
    if (layout_of(x) == Layout::kNhwc) in = permute_or_alias(op, in, {0, 3, 1, 2}, x.name + ".nchw", -1);
    if (ly == Layout::kNhwc) {
      std::vector<int32_t> nchw(y.shape.begin(), y.shape.end());
      const int view = alias(in, y.name + ".nchw", nchw);
      program_of_[op.outputs[0]] = permute_or_alias(op, view, {0, 2, 3, 1}, y.name, op.outputs[0]);
    } else {
      program_of_[op.outputs[0]] = alias(in, y.name, physical_dims(y), op.outputs[0]);
    }
  }

  void lower_permute(const Op& op) {
    const Tensor& x = tensor(op.inputs[0]);
    const Tensor& y = tensor(op.outputs[0]);
    if (layout_of(x) == Layout::kFlatNhwc) fail(op, "permute of a flattened image tensor is not supported");
    const auto in_order = physical_order(layout_of(x), x.shape.size());
    const auto out_order = physical_order(layout_of(y), y.shape.size());
    const auto& logical_perm = op.ints_attr("perm");
    std::vector<int> perm;
    for (int out_dim : out_order) {
      int64_t src = logical_perm[out_dim];
      if (src < 0) src += int64_t(x.shape.size());
      perm.push_back(int(std::find(in_order.begin(), in_order.end(), int(src)) - in_order.begin()));
    }
    program_of_[op.outputs[0]] = permute_or_alias(op, activation(op.inputs[0]), perm, y.name, op.outputs[0]);
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
    ProgramTensor pt = activation_record(ir_y, indices ? DType::kInt32 : act_dtype());
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

  // --- input_rows (split_into_patches, stream_input): rows [start, end) of a graph input, fetched
  // from the application while the program runs; the input itself gets no arena bytes ---

  void lower_input_rows(const Op& op) {
    const int input = int(std::find(g_.inputs.begin(), g_.inputs.end(), op.inputs[0]) - g_.inputs.begin());
    if (input == int(g_.inputs.size()) || tensor(op.inputs[0]).shape.size() != 4)
      fail(op, "internal: input rows of a tensor that is not a rank-4 graph input");
    const int x = p_.inputs[size_t(input)];
    if (p_.tensors[x].ir_tensor != op.inputs[0]) fail(op, "internal: input rows of an input that is converted first");
    p_.tensors[x].streamed = true;
    const int64_t row_bytes = p_.tensors[x].byte_size() / tensor(op.inputs[0]).shape[2];
    const int64_t start = op.int_attr("start"), end = op.int_attr("end");
    const format::InputRowsParams rows{uint32_t(input), uint32_t(start * row_bytes), uint32_t((end - start) * row_bytes)};
    emit(KernelId::read_input_rows, {}, {activation(op.outputs[0])}, params_bytes(rows), &op);
  }

  // --- pad, slice, expand, upsample: one strided gather ---

  void lower_strided_copy(const Op& op) {
    const Tensor& x = tensor(op.inputs[0]);
    const Tensor& y = tensor(op.outputs[0]);
    const size_t rank = y.shape.size();
    Gather g(rank);
    if (op.kind == "pad") {
      const auto& pad = op.ints_attr("pad");
      for (size_t i = 0; i < pad.size() / 2; ++i) g.start[rank - 1 - i] = -pad[2 * i];
      const float value = float(op.float_attr("value"));
      if (int8()) g.fill = quantized_bound(value, y.quant, false);
      else std::memcpy(&g.fill, &value, sizeof(g.fill));
    } else if (op.kind == "slice") {
      const size_t dim = dim_of(op, rank);
      g.start[dim] = op.int_attr("start");
      g.num[dim] = op.int_attr("step");
    } else if (op.kind == "expand") {
      g = broadcast_gather(x.shape, y.shape);
    } else {  // upsample_nearest2d
      const auto scale = op.ints_attr("scale");
      g.den[2] = scale[0];
      g.den[3] = scale.size() > 1 ? scale[1] : scale[0];
    }
    int in = in_layout_of(op, op.inputs[0], y);
    if (int8() && (x.quant.scale != y.quant.scale || x.quant.zero_point != y.quant.zero_point)) {
      in = requantized(op, in, x.quant, y.quant);
    }
    emit_gather(op, in, activation(op.outputs[0]), x.shape, y, g);
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
  void emit_gather(const Op& op, int in, int out, Shape x_shape, const Tensor& like, const Gather& g) {
    const size_t rank = like.shape.size();
    x_shape.insert(x_shape.begin(), rank - x_shape.size(), 1);
    const std::vector<int> phys = physical_order(layout_of(like), rank);
    k::StridedCopyParams p{};
    const int lead = int(k::kMaxRank) - int(rank);
    for (int d = 0; d < int(k::kMaxRank); ++d) {
      const int logical = d < lead ? -1 : phys[size_t(d - lead)];
      p.in_dims[d] = logical < 0 ? 1 : int32_t(x_shape[size_t(logical)]);
      p.out_dims[d] = logical < 0 ? 1 : int32_t(like.shape[size_t(logical)]);
      p.start[d] = logical < 0 ? 0 : int32_t(g.start[size_t(logical)]);
      p.num[d] = logical < 0 ? 1 : int32_t(g.num[size_t(logical)]);
      p.den[d] = logical < 0 ? 1 : int32_t(g.den[size_t(logical)]);
    }
    p.fill = g.fill;
    const bool bytes1 = p_.tensors[out].dtype == DType::kInt8;
    emit(bytes1 ? KernelId::strided_copy_b8 : KernelId::strided_copy_b32, {in}, {out}, params_bytes(p), &op);
  }

  // IR activation `x_ir` broadcast to the shape and layout of `y` (its own quantization).
  int broadcast_to(const Op& op, int x_ir, const Tensor& y) {
    const Tensor& x = tensor(x_ir);
    ProgramTensor pt = activation_record(x_ir, act_dtype());
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

  // A copy of int8 tensor `in` requantized from `from` to `to`.
  int requantized(const Op& op, int in, const Quant& from, const Quant& to) {
    ProgramTensor pt = p_.tensors[in];
    pt.name += ".requantized";
    pt.alias_of = -1;
    pt.ir_tensor = -1;
    pt.scale = to.scale;
    pt.zero_point = to.zero_point;
    const int out = p_.add_tensor(std::move(pt));
    k::RequantizeParams r{};
    r.n = int32_t(p_.tensors[out].byte_size());
    r.input_offset = -from.zero_point;
    r.output_offset = to.zero_point;
    const QuantizedMultiplier m = quantize_multiplier(double(from.scale) / to.scale);
    r.multiplier = m.multiplier;
    r.shift = m.shift;
    r.act_min = int32_t(to.type_min());
    r.act_max = int32_t(to.type_max());
    emit(KernelId::requantize_s8, {in}, {out}, params_bytes(r), &op);
    return out;
  }

  // --- activations: an int8 lookup table, or activation_f32 ---

  static int activation_function(const std::string& kind) {
    static const std::pair<const char*, int> kFunctions[] = {
        {"sigmoid", k::kActSigmoid}, {"tanh", k::kActTanh}, {"hardswish", k::kActHardswish},
        {"hardsigmoid", k::kActHardsigmoid}, {"silu", k::kActSilu}, {"gelu", k::kActGelu},
        {"elu", k::kActElu}, {"leaky_relu", k::kActLeakyRelu}, {"neg", k::kActNeg}, {"abs", k::kActAbs},
        {"mish", k::kActMish}};
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
    if (!int8()) {
      const k::ActivationParams p{int32_t(x.numel()), function, alpha};
      emit(KernelId::activation_f32, {in}, {out}, params_bytes(p), &op);
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
    if (!int8()) {
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

  // Source indices and weights of bilinear resizing along one axis, in float32 as PyTorch's
  // upsample_bilinear2d computes them (area_pixel_compute_scale / _source_index, its opmath
  // type for float input): `scale_factor` 0 when the output size was given.
  static void bilinear_axis(int64_t in, int64_t out, bool align_corners, double scale_factor,
                            std::vector<int32_t>& taps, std::vector<float>& weights) {
    float scale;
    if (align_corners) scale = out > 1 ? float(in - 1) / float(out - 1) : 0.0f;
    else scale = scale_factor > 0.0 ? float(1.0 / scale_factor) : float(in) / float(out);
    for (int64_t o = 0; o < out; ++o) {
      float src = align_corners ? scale * float(o) : scale * (float(o) + 0.5f) - 0.5f;
      if (src < 0.0f) src = 0.0f;
      const int64_t i0 = std::min(int64_t(std::floor(src)), in - 1);
      taps.push_back(int32_t(i0));
      taps.push_back(int32_t(i0 < in - 1 ? i0 + 1 : i0));
      weights.push_back(std::clamp(src - float(i0), 0.0f, 1.0f));
    }
  }

  void lower_upsample_bilinear(const Op& op) {
    const Tensor& x = tensor(op.inputs[0]);
    const Tensor& y = tensor(op.outputs[0]);
    require_batch1(op, x);
    if (layout_of(x) != Layout::kNhwc || layout_of(y) != Layout::kNhwc) fail(op, "internal: bilinear resize of a non-image tensor");
    const bool align_corners = op.int_attr("align_corners") != 0;
    k::ResizeBilinearParams p{int32_t(x.shape[2]), int32_t(x.shape[3]), int32_t(x.shape[1]), int32_t(y.shape[2]),
                              int32_t(y.shape[3])};
    std::vector<int32_t> taps;
    std::vector<float> weights;
    bilinear_axis(p.in_h, p.out_h, align_corners, op.float_attr("scale_h"), taps, weights);
    bilinear_axis(p.in_w, p.out_w, align_corners, op.float_attr("scale_w"), taps, weights);
    const int in = activation(op.inputs[0]);
    const int out = activation(op.outputs[0]);
    const int32_t entries = p.out_h + p.out_w;
    const int tid = constant(y.name + ".taps", DType::kInt32, {2 * entries}, taps);
    if (!int8()) {
      const int wid = constant(y.name + ".weights", DType::kFloat32, {entries}, weights);
      emit(KernelId::resize_bilinear_f32, {in, tid, wid}, {out}, params_bytes(p), &op);
      return;
    }
    // Fixed-point weights, rounded to nearest: the output keeps the input's quantization.
    std::vector<int32_t> fixed(weights.size());
    for (size_t i = 0; i < weights.size(); ++i)
      fixed[i] = int32_t(std::lround(double(weights[i]) * (1 << k::kResizeWeightBits)));
    const int wid = constant(y.name + ".weights", DType::kInt32, {entries}, fixed);
    emit(KernelId::resize_bilinear_s8, {in, tid, wid}, {out}, params_bytes(p), &op);
  }

  // --- reductions ---

  // A mean over H and W of an image tensor is a global average pool.
  bool is_spatial_mean(const Op& op) const {
    if (op.kind != "mean" || tensor(op.inputs[0]).shape.size() != 4) return false;
    std::vector<int64_t> dims = op.ints_attr("dims");
    for (int64_t& d : dims) d = d < 0 ? d + 4 : d;
    std::sort(dims.begin(), dims.end());
    return dims == std::vector<int64_t>{2, 3};
  }

  // The dims of `x` reduced by `op` ("dims" for mean/sum/amax, "dim" for argmax).
  static std::vector<bool> reduced_dims(const Op& op, const Tensor& x) {
    const int64_t rank = int64_t(x.shape.size());
    std::vector<int64_t> dims = op.kind == "argmax" ? std::vector<int64_t>{op.int_attr("dim")} : op.ints_attr("dims");
    std::vector<bool> reduced(x.shape.size(), dims.empty());
    for (int64_t d : dims) reduced[size_t(d < 0 ? d + rank : d)] = true;
    return reduced;
  }

  // Reductions run on [outer][reduce][inner] in x's physical order when the reduced dims are
  // adjacent there, otherwise after a permutation that moves them last.
  struct ReduceLayout {
    int in;                   // program tensor read by the kernel
    std::vector<int> order;   // x's logical dims in that tensor's order
    int32_t outer = 1, reduce = 1, inner = 1;
  };

  ReduceLayout reduce_layout(const Op& op, const std::vector<bool>& reduced) {
    const Tensor& x = tensor(op.inputs[0]);
    ReduceLayout r;
    r.order = physical_order(layout_of(x), x.shape.size());
    size_t first = r.order.size(), last = 0, count = 0;
    for (size_t k = 0; k < r.order.size(); ++k) {
      if (!reduced[size_t(r.order[k])]) continue;
      first = std::min(first, k);
      last = k;
      ++count;
    }
    if (count > 0 && last - first + 1 != count) {
      std::stable_partition(r.order.begin(), r.order.end(), [&](int d) { return !reduced[size_t(d)]; });
      first = r.order.size() - count;
    }
    r.in = reordered(op, op.inputs[0], r.order);
    for (size_t k = 0; k < r.order.size(); ++k) {
      const int32_t n = int32_t(x.shape[size_t(r.order[k])]);
      if (reduced[size_t(r.order[k])]) r.reduce *= n;
      else if (k < first) r.outer *= n;
      else r.inner *= n;
    }
    return r;
  }

  // y's logical dims in the kernel's output order: x's order without the reduced dims (with
  // them, as size-1 dims, when y keeps them).
  static std::vector<int> reduced_output_order(const std::vector<int>& x_order, const std::vector<bool>& reduced,
                                               bool keepdim) {
    std::vector<int> order;
    for (int d : x_order) {
      if (keepdim) {
        order.push_back(d);
      } else if (!reduced[size_t(d)]) {
        order.push_back(d - int(std::count(reduced.begin(), reduced.begin() + d, true)));
      }
    }
    return order;
  }

  void lower_reduce(const Op& op) {
    const Tensor& x = tensor(op.inputs[0]);
    const Tensor& y = tensor(op.outputs[0]);
    const std::vector<bool> reduced = reduced_dims(op, x);
    const ReduceLayout r = reduce_layout(op, reduced);
    k::ReduceParams p{};
    p.outer = r.outer;
    p.reduce = r.reduce;
    p.inner = r.inner;
    p.op = op.kind == "sum" ? k::kReduceSum : op.kind == "mean" ? k::kReduceMean : k::kReduceMax;
    const Quant& q = int8() ? y.quant : kUnquantized;
    p.act_min = int32_t(q.type_min());
    p.act_max = int32_t(q.type_max());
    if (int8()) {
      p.input_offset = -x.quant.zero_point;
      p.output_offset = y.quant.zero_point;
      const double count = p.op == k::kReduceMean ? double(p.reduce) : 1.0;
      const QuantizedMultiplier m = quantize_multiplier(double(x.quant.scale) / (count * y.quant.scale));
      p.multiplier = m.multiplier;
      p.shift = m.shift;
    }
    const std::vector<int> order = reduced_output_order(r.order, reduced, op.int_attr("keepdim") != 0);
    const int out = scratch(op.outputs[0], dims_in_order(y.shape, order));
    emit(int8() ? KernelId::reduce_s8 : KernelId::reduce_f32, {r.in}, {out}, params_bytes(p), &op,
         x.numel());
    define_output(op, op.outputs[0], out, order);
  }

  void lower_argmax(const Op& op) {
    const Tensor& x = tensor(op.inputs[0]);
    const Tensor& y = tensor(op.outputs[0]);
    if (!g_.is_graph_output(op.outputs[0]) || !g_.consumers(op.outputs[0]).empty())
      fail(op, "argmax is supported as a model output only (its int32 indices feed no other op)");
    const std::vector<bool> reduced = reduced_dims(op, x);
    const ReduceLayout r = reduce_layout(op, reduced);
    const k::ArgmaxParams p{r.outer, r.reduce, r.inner};
    const std::vector<int> order = reduced_output_order(r.order, reduced, op.int_attr("keepdim") != 0);
    const int out = scratch(op.outputs[0], dims_in_order(y.shape, order), /*indices=*/true);
    emit(int8() ? KernelId::argmax_s8 : KernelId::argmax_f32, {r.in}, {out}, params_bytes(p), &op);
    define_output(op, op.outputs[0], out, order);
  }

  // --- transposed convolution, matrix products, layer norm ---

  void lower_conv_transpose(const Op& op) {
    const Tensor& x = tensor(op.inputs[0]);
    const Tensor& w = tensor(op.inputs[1]);  // PyTorch [in_c][out_c][k_h][k_w]
    const Tensor& y = tensor(op.outputs[0]);
    require_batch1(op, x);
    const int32_t in_c = int32_t(w.shape[0]), out_c = int32_t(w.shape[1]);
    const int32_t kh = int32_t(w.shape[2]), kw = int32_t(w.shape[3]);
    std::vector<size_t> ohwi_from_logical(w.data.size());
    for (int32_t i = 0; i < in_c; ++i)
      for (int32_t o = 0; o < out_c; ++o)
        for (int32_t ky = 0; ky < kh; ++ky)
          for (int32_t kx = 0; kx < kw; ++kx)
            ohwi_from_logical[((size_t(o) * kh + ky) * kw + kx) * in_c + i] = ((size_t(i) * out_c + o) * kh + ky) * kw + kx;
    const auto stride = op.ints_attr("stride"), pad = op.ints_attr("padding"), dil = op.ints_attr("dilation");
    auto second = [](const std::vector<int64_t>& v) { return int32_t(v.size() > 1 ? v[1] : v[0]); };
    k::ConvParams p{};
    p.in_h = int32_t(x.shape[2]); p.in_w = int32_t(x.shape[3]); p.in_c = in_c;
    p.out_h = int32_t(y.shape[2]); p.out_w = int32_t(y.shape[3]); p.out_c = out_c;
    p.k_h = kh; p.k_w = kw;
    p.stride_h = int32_t(stride[0]); p.stride_w = second(stride);
    p.pad_top = int32_t(pad[0]); p.pad_left = second(pad);
    p.dil_h = int32_t(dil[0]); p.dil_w = second(dil);
    p.input_offset = int8() ? -x.quant.zero_point : 0;
    p.output_offset = int8() ? y.quant.zero_point : 0;
    fill_activation(p, op, y);
    const int in = activation(op.inputs[0]);
    const int out = activation(op.outputs[0]);
    const int64_t macs = x.numel() * out_c * kh * kw;
    const std::vector<int32_t> w_dims = {out_c, kh, kw, in_c};
    if (!int8()) {
      const int wid = constant(w.name, DType::kFloat32, w_dims, gathered(w.data, ohwi_from_logical));
      const int bid = constant(w.name + ".bias", DType::kFloat32, {out_c}, bias_of(op, out_c));
      emit(KernelId::transpose_conv_f32, {in, wid, bid}, {out}, params_bytes(p), &op, macs);
      return;
    }
    int bid, mid, sid;
    requant_tables(op, x, w, y, out_c, int64_t(in_c) * kh * kw, bid, mid, sid);
    const int wid = constant(w.name, DType::kInt8, w_dims, narrowed<int8_t>(gathered(quantized(w), ohwi_from_logical)));
    emit(KernelId::transpose_conv_s8, {in, wid, bid, mid, sid}, {out}, params_bytes(p), &op, macs);
  }

  void lower_matmul(const Op& op) {
    const Tensor& a = tensor(op.inputs[0]);
    const Tensor& b = tensor(op.inputs[1]);
    const Tensor& y = tensor(op.outputs[0]);
    if (a.constant || b.constant) fail(op, "matmul with a constant operand is a linear layer");
    k::BatchMatmulParams p{};
    p.m = int32_t(a.shape[a.shape.size() - 2]);
    p.k = int32_t(a.shape.back());
    p.n = int32_t(b.shape.back());
    p.batch = int32_t(y.numel() / (int64_t(p.m) * p.n));
    if (int8()) {
      p.lhs_offset = -a.quant.zero_point;
      p.rhs_offset = -b.quant.zero_point;
      p.output_offset = y.quant.zero_point;
      const QuantizedMultiplier m = mul_rescale(a.quant.scale, b.quant.scale, y.quant.scale);
      p.multiplier = m.multiplier;
      p.shift = m.shift;
    }
    fill_activation(p, op, y);
    const std::vector<int> order = identity_order(y.shape.size());
    const int lhs = reordered(op, op.inputs[0], order);
    const int rhs = reordered(op, op.inputs[1], order);
    const int out = scratch(op.outputs[0], logical_dims(y));
    emit(int8() ? KernelId::batch_matmul_s8 : KernelId::batch_matmul_f32, {lhs, rhs}, {out}, params_bytes(p), &op,
         y.numel() * p.k);
    define_output(op, op.outputs[0], out, order);
  }

  // layer_norm and group_norm (GroupNorm, InstanceNorm) on one kernel: the normalized
  // values of each group, then a per-channel affine (GroupNormParams).
  struct NormLayout {
    std::vector<int> order;  // x's logical dims in the kernel's [outer][spatial][channels] order
    k::GroupNormParams params;
  };

  NormLayout norm_layout(const Op& op) const {
    const Tensor& x = tensor(op.inputs[0]);
    NormLayout l;
    l.params = k::GroupNormParams{};
    l.params.eps = float(op.float_attr("eps"));
    const int64_t numel = x.numel();
    if (op.kind == "layer_norm") {  // each row one group
      l.order = identity_order(x.shape.size());
      l.params.outer = int32_t(numel / x.shape.back());
      l.params.spatial = 1;
      l.params.groups = 1;
      l.params.group_size = int32_t(x.shape.back());
    } else {  // channels (dim 1) innermost, like NHWC
      l.order.push_back(0);
      for (size_t d = 2; d < x.shape.size(); ++d) l.order.push_back(int(d));
      l.order.push_back(1);
      const int64_t groups = op.int_attr("groups");
      l.params.outer = int32_t(x.shape[0]);
      l.params.spatial = int32_t(numel / (x.shape[0] * x.shape[1]));
      l.params.groups = int32_t(groups);
      l.params.group_size = int32_t(x.shape[1] / groups);
    }
    return l;
  }

  // The int8 constants of group_norm_s8, or the reason it cannot run in int8: kernel tables
  // (like a lookup table's), not a tensor's quantization spec. Channel c's weight is the
  // largest symmetric integer (or less, see below) with its magnitude in a per-channel scale,
  // so the affine keeps the float weight's precision; the bias is in units of unit * scale,
  // unit the value of normalized == 1. A scale is raised above |weight| / largest where the
  // bias would otherwise exceed the kernel's 2^30 bound.
  struct NormTables {
    std::vector<int8_t> weights;
    std::vector<int32_t> bias, multipliers, shifts;
    int64_t eps = 0;
    std::string problem;
  };

  NormTables norm_tables(const Op& op, const k::GroupNormParams& p) const {
    const Tensor& x = tensor(op.inputs[0]);
    const Tensor& y = tensor(op.outputs[0]);
    const std::vector<float>& w = tensor(op.inputs[1]).data;
    const std::vector<float>& b = tensor(op.inputs[2]).data;
    NormTables t;
    const int64_t count = int64_t(p.spatial) * p.group_size;
    if (count > k::kGroupNormMaxCount) {
      t.problem = "normalizes " + std::to_string(count) + " values together, more than the int8 kernel's " +
                  std::to_string(k::kGroupNormMaxCount);
      return t;
    }
    const double eps = std::round(std::ldexp(double(count) * double(count) * p.eps, k::kGroupNormVarianceBits) /
                                  (double(x.quant.scale) * x.quant.scale));
    if (!(eps <= double(k::kGroupNormMaxEps))) {
      t.problem = "eps is too large for the input's scale (eps / scale^2 exceeds the int8 kernel's range)";
      return t;
    }
    t.eps = int64_t(eps);
    const double unit = std::ldexp(1.0, -k::kGroupNormFractionBits);
    const double max_bias = double(k::kGroupNormMaxBias);
    Quant weight_type;  // group_norm_s8 reads symmetric int8 weights
    weight_type.bits = kWeightBits;
    weight_type.symmetric = true;
    const double largest = double(weight_type.q_max());
    for (size_t c = 0; c < w.size(); ++c) {
      double scale = std::max(std::fabs(double(w[c])) / largest, std::fabs(double(b[c])) / (unit * max_bias) * (1 + 1e-9));
      if (scale == 0.0) scale = 1.0;
      t.weights.push_back(int8_t(std::clamp(std::round(w[c] / scale), -largest, largest)));
      t.bias.push_back(int32_t(std::clamp(std::round(b[c] / (unit * scale)), -max_bias, max_bias)));
      const QuantizedMultiplier m = quantize_multiplier(unit * scale / y.quant.scale);
      if (m.shift > 0) {
        t.problem = "the output scale is too fine for weight " + std::to_string(w[c]) + " (a multiplier above 1)";
        return t;
      }
      t.multipliers.push_back(m.multiplier);
      t.shifts.push_back(m.shift);
    }
    return t;
  }

  void lower_norm(const Op& op) {
    const Tensor& y = tensor(op.outputs[0]);
    const Tensor& w = tensor(op.inputs[1]);
    const Tensor& b = tensor(op.inputs[2]);
    NormLayout l = norm_layout(op);
    const int32_t channels = l.params.groups * l.params.group_size;
    const int in = reordered(op, op.inputs[0], l.order);
    const int out = scratch(op.outputs[0], dims_in_order(y.shape, l.order));
    if (!int8()) {
      const int wid = constant(w.name, DType::kFloat32, {channels}, w.data);
      const int bid = constant(b.name, DType::kFloat32, {channels}, b.data);
      emit(KernelId::group_norm_f32, {in, wid, bid}, {out}, params_bytes(l.params), &op);
    } else {
      const NormTables t = norm_tables(op, l.params);
      l.params.eps_lo = int32_t(uint32_t(uint64_t(t.eps)));
      l.params.eps_hi = int32_t(uint32_t(uint64_t(t.eps) >> 32));
      l.params.output_offset = y.quant.zero_point;
      l.params.act_min = int32_t(y.quant.type_min());
      l.params.act_max = int32_t(y.quant.type_max());
      const int wid = constant(w.name, DType::kInt8, {channels}, t.weights);
      const int bid = constant(b.name, DType::kInt32, {channels}, t.bias);
      const int mid = constant(w.name + ".multipliers", DType::kInt32, {channels}, t.multipliers);
      const int sid = constant(w.name + ".shifts", DType::kInt32, {channels}, t.shifts);
      emit(KernelId::group_norm_s8, {in, wid, bid, mid, sid}, {out}, params_bytes(l.params), &op);
    }
    define_output(op, op.outputs[0], out, l.order);
  }

  const Graph& g_;
  const LowerOptions& o_;
  LoweredProgram p_;
  std::vector<int> program_of_;
  bool float_fallback_ = false;   // lowering one op of an int8 program in float (lower_as_float)
  std::string fallback_reason_;   // recorded on every op emitted meanwhile
};

}  // namespace

std::vector<int> physical_order(Layout layout, size_t rank) {
  std::vector<int> order(rank);
  std::iota(order.begin(), order.end(), 0);
  if (layout == Layout::kNhwc) order = {0, 2, 3, 1};
  return order;
}

uint32_t ProgramTensor::byte_size() const {
  uint32_t n = format::dtype_bytes(dtype);
  for (int32_t d : dims) n *= uint32_t(d);
  return n;
}

int LoweredProgram::add_tensor(ProgramTensor t) {
  tensors.push_back(std::move(t));
  return int(tensors.size()) - 1;
}

LoweredProgram lower(const Graph& g, const LowerOptions& options) { return Lowering(g, options).run(); }

}  // namespace mcuflow::compiler
