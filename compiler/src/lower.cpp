#include "mcuflow/compiler/lower.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>

#include "mcuflow/compiler/quant_math.h"
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

int32_t int8_bound(float real, const Quant& q, bool upper) {
  if (std::isinf(real)) return upper ? 127 : -128;
  const double v = std::round(double(real) / q.scale) + q.zero_point;
  return int32_t(std::clamp(v, -128.0, 127.0));
}

// Symmetric int8 quantization of `values` split into `channels` equal groups (1 = per tensor).
struct SymmetricWeights {
  std::vector<int8_t> q;
  std::vector<float> scales;
};

SymmetricWeights quantize_symmetric(const std::vector<float>& values, size_t channels) {
  SymmetricWeights w;
  const size_t per = values.size() / channels;
  w.q.resize(values.size());
  for (size_t c = 0; c < channels; ++c) {
    float max_abs = 0.0f;
    for (size_t i = 0; i < per; ++i) max_abs = std::max(max_abs, std::fabs(values[c * per + i]));
    const float scale = max_abs > 0.0f ? max_abs / 127.0f : 1.0f;
    w.scales.push_back(scale);
    for (size_t i = 0; i < per; ++i) {
      const float v = std::round(values[c * per + i] / scale);
      w.q[c * per + i] = int8_t(std::clamp(v, -127.0f, 127.0f));
    }
  }
  return w;
}

Quant quant_of_values(const std::vector<float>& values) {
  float lo = 0.0f, hi = 0.0f;
  for (float v : values) {
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  }
  Quant q;
  q.valid = true;
  q.scale = std::max((hi - lo) / 255.0f, 1e-8f);
  q.zero_point = int32_t(std::clamp(std::round(-128.0f - lo / q.scale), -128.0f, 127.0f));
  return q;
}

std::vector<int8_t> quantize_values(const std::vector<float>& values, const Quant& q) {
  std::vector<int8_t> out(values.size());
  for (size_t i = 0; i < values.size(); ++i) {
    const float v = std::round(values[i] / q.scale) + float(q.zero_point);
    out[i] = int8_t(std::clamp(v, -128.0f, 127.0f));
  }
  return out;
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
  bool int8() const { return o_.precision == Precision::kInt8; }
  DType act_dtype() const { return int8() ? DType::kInt8 : DType::kFloat32; }

  static Layout layout_of(const Tensor& t) {
    if (!t.nhwc) return Layout::kPlain;
    return t.shape.size() == 4 ? Layout::kNhwc : Layout::kFlatNhwc;
  }

  static std::vector<int32_t> physical_dims(const Tensor& t) {
    std::vector<int32_t> dims;
    const Layout layout = layout_of(t);
    for (int d : physical_order(layout, t.shape.size())) dims.push_back(int32_t(t.shape[d]));
    if (dims.empty()) dims.push_back(1);
    return dims;
  }

  const Tensor& tensor(int id) const { return g_.tensors[id]; }

  ProgramTensor activation_record(int ir, DType dtype) const {
    const Tensor& t = tensor(ir);
    if (t.shape.size() > 4) throw CompileError("tensor " + t.name + " has rank " + std::to_string(t.shape.size()) + "; at most 4 is supported");
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
    if (!int8() || o_.int8_io) {
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
    if (op.kind == "conv2d") return lower_conv(op);
    if (op.kind == "linear") return lower_linear(op);
    if (op.kind == "add" || op.kind == "mul") return lower_binary(op);
    if (op.kind == "max_pool2d" || op.kind == "avg_pool2d") return lower_pool(op);
    if (op.kind == "mean" || op.kind == "adaptive_avg_pool2d") return lower_global_pool(op);
    if (op.kind == "softmax") return lower_softmax(op);
    if (op.kind == "relu" || op.kind == "clamp") return lower_clamp(op);
    if (op.kind == "cat") return lower_cat(op);
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
    if (int8()) {
      p.act_min = int8_bound(op.act_min, y.quant, false);
      p.act_max = int8_bound(op.act_max, y.quant, true);
    } else {
      p.act_min = -128;
      p.act_max = 127;
    }
    p.act_min_f = std::isinf(op.act_min) ? -3.4e38f : op.act_min;
    p.act_max_f = std::isinf(op.act_max) ? 3.4e38f : op.act_max;
  }

  // Bias (int32, scale in_scale * w_scale[c]), multipliers and shifts per output channel.
  void requant_tables(const std::string& name, const Tensor& x, const Tensor& y, const std::vector<float>& bias,
                      const std::vector<float>& w_scales, int& bias_id, int& mult_id, int& shift_id) {
    std::vector<int32_t> b(bias.size()), m(w_scales.size()), s(w_scales.size());
    for (size_t c = 0; c < bias.size(); ++c) {
      const double scale = double(x.quant.scale) * w_scales[w_scales.size() == 1 ? 0 : c];
      b[c] = int32_t(std::clamp(std::round(bias[c] / scale), -2147483648.0, 2147483647.0));
    }
    for (size_t c = 0; c < w_scales.size(); ++c) {
      const QuantizedMultiplier qm = quantize_multiplier(double(x.quant.scale) * w_scales[c] / y.quant.scale);
      m[c] = qm.multiplier;
      s[c] = qm.shift;
    }
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
    std::vector<float> wt(w.data.size());
    for (int32_t o = 0; o < out_c; ++o)
      for (int32_t ky = 0; ky < kh; ++ky)
        for (int32_t kx = 0; kx < kw; ++kx)
          for (int32_t i = 0; i < (depthwise ? 1 : in_c); ++i) {
            const float v = w.data[((size_t(o) * (depthwise ? 1 : in_c) + i) * kh + ky) * kw + kx];
            if (depthwise) wt[(size_t(ky) * kw + kx) * out_c + o] = v;
            else wt[((size_t(o) * kh + ky) * kw + kx) * in_c + i] = v;
          }
    const std::vector<float> bias = bias_of(op, out_c);

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
      const int wid = constant(name, DType::kFloat32, w_dims, wt);
      const int bid = constant(name + ".bias", DType::kFloat32, {out_c}, bias);
      emit(depthwise ? KernelId::dwconv_f32 : KernelId::conv_f32, {in, wid, bid}, {out}, params, &op, macs);
      return;
    }
    // Per-channel scales are computed in PyTorch's O-major order, then the int8 values are
    // laid out like `wt`.
    const SymmetricWeights sw = quantize_symmetric(w.data, size_t(out_c));
    std::vector<int8_t> wq(wt.size());
    for (size_t i = 0; i < wt.size(); ++i) {
      const size_t o = depthwise ? i % size_t(out_c) : i / per_out;
      wq[i] = int8_t(std::clamp(std::round(wt[i] / sw.scales[o]), -127.0f, 127.0f));
    }
    int bid, mid, sid;
    requant_tables(name, x, y, bias, sw.scales, bid, mid, sid);
    const int wid = constant(name, DType::kInt8, w_dims, wq);
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
    p.per_channel = 0;
    p.input_offset = int8() ? -x.quant.zero_point : 0;
    p.output_offset = int8() ? y.quant.zero_point : 0;
    fill_activation(p, op, y);
    const std::vector<float> bias = bias_of(op, out_c);
    const int in = activation(op.inputs[0]);
    const int out = activation(op.outputs[0]);
    const int64_t macs = int64_t(p.rows) * in_c * out_c;
    if (!int8()) {
      const int wid = constant(w.name, DType::kFloat32, {out_c, in_c}, w.data);
      const int bid = constant(w.name + ".bias", DType::kFloat32, {out_c}, bias);
      emit(KernelId::fc_f32, {in, wid, bid}, {out}, params_bytes(p), &op, macs);
      return;
    }
    const SymmetricWeights sw = quantize_symmetric(w.data, 1);
    int bid, mid, sid;
    requant_tables(w.name, x, y, bias, sw.scales, bid, mid, sid);
    const int wid = constant(w.name, DType::kInt8, {out_c, in_c}, sw.q);
    emit(KernelId::fc_s8, {in, wid, bid, mid, sid}, {out}, params_bytes(p), &op, macs);
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
    // The kernels broadcast only their second operand: both ops are commutative.
    if (tensor(a_id).numel() != y.numel() || tensor(a_id).constant) std::swap(a_id, b_id);
    const Tensor& a = tensor(a_id);
    const Tensor& b = tensor(b_id);
    if (a.constant || a.numel() != y.numel()) fail(op, "broadcasting both operands is not supported");
    const int mode = broadcast_mode(b, y);
    if (mode < 0) fail(op, "broadcast of " + shape_str(b.shape) + " against " + shape_str(y.shape) + " is not supported (same shape, per-channel or scalar only)");
    if (mode == 0 && !b.constant && b.nhwc != a.nhwc) fail(op, "operands have different layouts");

    k::BinaryParams p{};
    const std::vector<int32_t> y_dims = physical_dims(y);
    p.inner = mode == 1 ? y_dims.back() : int32_t(y.numel());
    p.outer = int32_t(y.numel() / p.inner);
    p.in2_mode = mode;
    fill_activation(p, op, y);
    const bool is_add = op.kind == "add";

    Quant bq = b.quant;
    int bid;
    if (b.constant) {
      const std::vector<float> phys = mode == 0 ? to_physical(b.data, b.shape, Lowering::layout_of(a)) : b.data;
      if (int8()) {
        bq = quant_of_values(phys);
        bid = constant(b.name, DType::kInt8, {int32_t(phys.size())}, quantize_values(phys, bq));
      } else {
        bid = constant(b.name, DType::kFloat32, {int32_t(phys.size())}, phys);
      }
    } else {
      bid = activation(b_id);
    }
    const int aid = activation(a_id);
    const int out = activation(op.outputs[0]);
    if (int8()) {
      p.input1_offset = -a.quant.zero_point;
      p.input2_offset = -bq.zero_point;
      p.output_offset = y.quant.zero_point;
      if (is_add) {
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
      emit(is_add ? KernelId::add_s8 : KernelId::mul_s8, {aid, bid}, {out}, params_bytes(p), &op);
    } else {
      emit(is_add ? KernelId::add_f32 : KernelId::mul_f32, {aid, bid}, {out}, params_bytes(p), &op);
    }
  }

  void emit_pool(const Op& op, bool is_max, int32_t kh, int32_t kw, int32_t sh, int32_t sw, int32_t ph, int32_t pw) {
    const Tensor& x = tensor(op.inputs[0]);
    const Tensor& y = tensor(op.outputs[0]);
    require_batch1(op, x);
    k::PoolParams p{};
    p.in_h = int32_t(x.shape[2]); p.in_w = int32_t(x.shape[3]); p.c = int32_t(x.shape[1]);
    p.out_h = int32_t(y.shape.size() == 4 ? y.shape[2] : 1);  // mean without keepdim: [N, C]
    p.out_w = int32_t(y.shape.size() == 4 ? y.shape[3] : 1);
    p.k_h = kh; p.k_w = kw; p.stride_h = sh; p.stride_w = sw; p.pad_top = ph; p.pad_left = pw;
    p.act_min = -128;
    p.act_max = 127;
    p.act_min_f = -3.4e38f;
    p.act_max_f = 3.4e38f;
    if (int8() && (x.quant.scale != y.quant.scale || x.quant.zero_point != y.quant.zero_point))
      fail(op, "pooling input and output must share quantization");
    const int in = activation(op.inputs[0]);
    const int out = activation(op.outputs[0]);
    const KernelId id = is_max ? (int8() ? KernelId::maxpool_s8 : KernelId::maxpool_f32)
                               : (int8() ? KernelId::avgpool_s8 : KernelId::avgpool_f32);
    emit(id, {in}, {out}, params_bytes(p), &op, int64_t(p.out_h) * p.out_w * p.c * kh * kw);
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
    emit_pool(op, op.kind == "max_pool2d", int32_t(kernel[0]), int32_t(kernel[1]), int32_t(stride[0]),
              int32_t(stride[1]), int32_t(pad[0]), int32_t(pad[1]));
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
    if (x.nhwc) fail(op, "softmax over the width of an image tensor is not supported");
    k::SoftmaxParams p{};
    p.depth = int32_t(x.shape.back());
    p.rows = int32_t(x.numel() / p.depth);
    if (int8()) {
      const SoftmaxRescale r = softmax_rescale(x.quant.scale);
      p.input_multiplier = r.input_multiplier;
      p.input_left_shift = r.input_left_shift;
      p.diff_min = r.diff_min;
    }
    const int in = activation(op.inputs[0]);
    const int out = activation(op.outputs[0]);
    emit(int8() ? KernelId::softmax_s8 : KernelId::softmax_f32, {in}, {out}, params_bytes(p), &op);
  }

  void lower_clamp(const Op& op) {
    const Tensor& x = tensor(op.inputs[0]);
    const Tensor& y = tensor(op.outputs[0]);
    const float lo = op.kind == "relu" ? 0.0f : float(op.float_attr("min"));
    const float hi = op.kind == "relu" ? 3.4e38f : float(op.float_attr("max"));
    k::ClampParams p{};
    p.n = int32_t(x.numel());
    if (int8()) {
      p.act_min = int8_bound(lo, y.quant, false);
      p.act_max = int8_bound(hi >= 3.4e38f ? INFINITY : hi, y.quant, true);
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
    const int64_t logical_dim = op.int_attr("dim") < 0 ? op.int_attr("dim") + int64_t(y.shape.size()) : op.int_attr("dim");
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
      if (x.constant) fail(op, "cat of a constant tensor is not supported");
      if (x.nhwc != y.nhwc) fail(op, "inputs have different layouts");
      k::ConcatSliceParams p{};
      p.outer = int32_t(outer);
      p.in_c = int32_t(x.shape[logical_dim] * after);
      p.out_c = int32_t(y.shape[logical_dim] * after);
      p.offset_c = int32_t(offset);
      offset += p.in_c;
      if (int8() && (x.quant.scale != y.quant.scale || x.quant.zero_point != y.quant.zero_point)) {
        const QuantizedMultiplier m = quantize_multiplier(double(x.quant.scale) / y.quant.scale);
        p.requantize = 1;
        p.input_offset = -x.quant.zero_point;
        p.output_offset = y.quant.zero_point;
        p.multiplier = m.multiplier;
        p.shift = m.shift;
      }
      emit(int8() ? KernelId::concat_slice_s8 : KernelId::concat_slice_f32, {activation(input)}, {out},
           params_bytes(p), &op);
    }
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
    const int pad = 4 - int(in_dims.size());
    for (int d = 0; d < 4; ++d) {
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

  const Graph& g_;
  const LowerOptions& o_;
  LoweredProgram p_;
  std::vector<int> program_of_;
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
