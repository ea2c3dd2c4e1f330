#include "mcuflow/compiler/lower.h"

#include "mcuflow/compiler/layout.h"
#include "ops/lowering.h"

namespace mcuflow::compiler {
namespace {

// The program's I/O, and each op through its registered lowering: on an int8 kernel, or in
// float between a dequantize and a quantize when its family names a reason an int8 kernel
// cannot take it.
class ProgramLowering : public Lowering {
 public:
  using Lowering::Lowering;

  LoweredProgram run() {
    p_.precision = o_.layer_notes.empty() ? precision_name(o_.precision) : "mixed";
    if (!is_quantized()) p_.flags |= format::kFlagFloatPrecision;
    if (is_quantized() && o_.int8_io) p_.flags |= format::kFlagInt8Io;
    for (int t : g_.inputs) lower_input(t);
    for (const StateTensor& s : g_.states) {
      if (!s.ring) lower_state(s);  // a ring's conv lowers it (ops/conv.cpp)
    }
    for (const Op& op : g_.ops) lower_op(op);
    for (int t : g_.outputs) lower_output(t);
    for (const StateTensor& s : g_.states) {
      if (!s.ring) lower_state_update(s);
    }
    return std::move(p_);
  }

 private:
  // --- state ---

  // The state's tensor in the program's activation type (quantized: int8, its own spec), holding its
  // initial value in physical order.
  void lower_state(const StateTensor& s) {
    const int t = activation(s.tensor);
    ProgramTensor& pt = p_.tensors[t];
    pt.state = true;
    const Tensor& ir = tensor(s.tensor);
    std::vector<uint8_t> logical;
    if (is_quantized()) logical = quantized_bytes(quantize_values(s.initial, spec_of(ir), ir.shape), pt.dtype);
    else logical = raw_bytes(s.initial);
    pt.bytes = logical_to_physical(logical.data(), ir.shape, pt.layout, format::element_bytes(pt.dtype));
  }

  // The value the run leaves in the state: the update as the state stores it (int8: requantized
  // to the state's spec when the update's op fixed another one).
  void lower_state_update(const StateTensor& s) {
    const Tensor& state = tensor(s.tensor);
    const Tensor& update = tensor(s.update);
    const auto refuse = [&](const std::string& why) { throw CompileError("state " + state.name + ": " + why); };
    if (s.update == s.tensor) refuse("its update is its own value; nothing changes it");
    if (update.constant) refuse("its update is a constant; a constant buffer needs no state");
    if (update.shape != state.shape) refuse("its update has shape " + shape_str(update.shape) + ", the state " + shape_str(state.shape));
    if (update.nhwc != state.nhwc) refuse("its update is stored in another layout (NHWC) than the state");
    int value = activation(s.update);
    if (p_.tensors[value].dtype != p_.tensors[activation(s.tensor)].dtype) refuse("its update is not of the state's type");
    if (is_quantized() && spec_of(update) != spec_of(state)) {
      Op requantize;
      requantize.kind = "state_update";
      value = requantized(requantize, value, update.quant, state.quant);
    }
    p_.states.push_back(StateUpdate{activation(s.tensor), value});
  }

  // --- I/O ---

  void lower_input(int ir) {
    const Tensor& t = tensor(ir);
    if (!is_quantized() || o_.int8_io || t.element == Element::kIds) {
      p_.inputs.push_back(activation(ir));
      return;
    }
    ProgramTensor f = activation_record(ir, DType::kFloat32);
    f.name = t.name;
    f.ir_tensor = -1;
    const int float_in = p_.add_tensor(std::move(f));
    p_.inputs.push_back(float_in);
    const int q = activation(ir);
    p_.tensors[q].name = t.name + (is_int16(ir) ? ".int16" : ".int8");
    k::QuantizeParams qp{int32_t(t.numel()), t.quant.scale, t.quant.zero_point};
    emit(quantize_kernel(p_.tensors[q].dtype), {float_in}, {q}, params_bytes(qp), nullptr);
  }

  void lower_output(int ir) {
    const Tensor& t = tensor(ir);
    if (t.constant) throw CompileError("model output " + t.name + " is a constant; nothing to compute");
    const int q = activation(ir);
    // A mask leaves an int8-io program as its bytes, any other program as float32 0s and 1s.
    const bool mask = t.element == Element::kMask;
    if ((!is_quantized() && !mask) || o_.int8_io || p_.tensors[q].dtype == DType::kInt32) {
      p_.outputs.push_back(q);
      return;
    }
    ProgramTensor f = activation_record(ir, DType::kFloat32);
    f.name = t.name + ".float";
    f.ir_tensor = -1;
    const int float_out = p_.add_tensor(std::move(f));
    const Quant& oq = mask ? kMaskQuant : t.quant;
    k::QuantizeParams qp{int32_t(t.numel()), oq.scale, oq.zero_point};
    emit(dequantize_kernel(p_.tensors[q].dtype), {q}, {float_out}, params_bytes(qp), nullptr);
    p_.outputs.push_back(float_out);
  }

  // --- ops ---

  void lower_op(const Op& op) {
    const OpDef* def = find_op(op.kind);
    if (def == nullptr || def->lower == nullptr) fail(op, "no lowering for this op");
    if (!is_quantized()) return def->lower(*this, op);
    const std::string why = def->int8_rejection ? def->int8_rejection(*this, op) : "";
    if (why.empty()) return def->lower(*this, op);
    if (!o_.allow_fallback) fail(op, "no int8 kernel: " + why + " (float fallback is disabled)");
    lower_as_float(*def, op, why);
  }

  // The op on its float32 kernel between a dequantize of each activation input and a quantize
  // of its output (the portable path), each emitted op carrying the reason.
  void lower_as_float(const OpDef& def, const Op& op, const std::string& why) {
    fallback_reason_ = why;
    std::vector<std::pair<int, int>> int8_of;  // IR tensor -> its int8 program tensor
    for (int ir : op.inputs) {
      const Tensor& t = tensor(ir);
      if (t.constant || t.element != Element::kReal ||
          std::any_of(int8_of.begin(), int8_of.end(), [&](auto& e) { return e.first == ir; }))
        continue;
      const int q = activation(ir);
      ProgramTensor f = activation_record(ir, DType::kFloat32);
      f.name = t.name + ".dequantized";
      f.ir_tensor = -1;
      f.dims = p_.tensors[q].dims;
      const int fid = p_.add_tensor(std::move(f));
      k::QuantizeParams qp{int32_t(t.numel()), t.quant.scale, t.quant.zero_point};
      emit(dequantize_kernel(p_.tensors[q].dtype), {q}, {fid}, params_bytes(qp), &op);
      int8_of.push_back({ir, q});
      program_of_[ir] = fid;
    }
    float_fallback_ = true;
    def.lower(*this, op);
    float_fallback_ = false;
    const int y_ir = op.outputs[0];
    const int f_out = program_of_[y_ir];
    p_.tensors[f_out].ir_tensor = -1;
    p_.tensors[f_out].name = tensor(y_ir).name + ".float";
    program_of_[y_ir] = -1;
    for (const auto& [ir, q] : int8_of) program_of_[ir] = q;
    const Tensor& y = tensor(y_ir);
    k::QuantizeParams qp{int32_t(y.numel()), y.quant.scale, y.quant.zero_point};
    const int q_out = activation(y_ir);
    emit(quantize_kernel(p_.tensors[q_out].dtype), {f_out}, {q_out}, params_bytes(qp), &op);
    fallback_reason_.clear();
  }
};

}  // namespace

std::vector<int> physical_order(Layout layout, size_t rank) {
  std::vector<int> order(rank);
  std::iota(order.begin(), order.end(), 0);
  if (layout == Layout::kNhwc && rank >= 3) {  // channels last: [N, H, W, C], or [N, L, C]
    std::rotate(order.begin() + 1, order.begin() + 2, order.end());
  }
  return order;
}

std::string layer_precision_name(int activation_bits, int weight_bits) {
  return "A" + std::to_string(activation_bits) + "W" + std::to_string(weight_bits);
}

const char* precision_name(Precision p) {
  switch (p) {
    case Precision::kInt8: return "int8";
    case Precision::kInt16: return "int16";
    case Precision::kFloat32: break;
  }
  return "fp32";
}

uint32_t ProgramTensor::byte_size() const {
  uint64_t count = 1;
  for (int32_t d : dims) count *= uint64_t(d);
  return uint32_t(format::storage_bytes(dtype, count));
}

int LoweredProgram::add_tensor(ProgramTensor t) {
  tensors.push_back(std::move(t));
  return int(tensors.size()) - 1;
}

LoweredProgram lower(const Graph& g, const LowerOptions& options) {
  LoweringState state(g, options);
  return ProgramLowering(state).run();
}

}  // namespace mcuflow::compiler


