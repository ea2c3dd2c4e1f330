// Masks and lookups: the comparisons eq, ne, lt, le, gt, ge (a mask of 0/1 bytes out,
// Element::kMask), where (a mask picks between two values; masked_fill is a where) and
// embedding (rows of a constant table by int32 ids). Every case has an int8 kernel.
#include "families.h"
#include "lowering.h"

namespace mcuflow::compiler {
namespace {

Shape infer_compare(const Graph& g, const Op& op) {
  if (op.inputs.size() != 2) fail(op, "expects two inputs");
  return broadcast_shapes(op, in_shape(g, op, 0), in_shape(g, op, 1));
}

Shape infer_where(const Graph& g, const Op& op) {
  if (op.inputs.size() != 3) fail(op, "expects a mask and two values");
  return broadcast_shapes(op, in_shape(g, op, 0), broadcast_shapes(op, in_shape(g, op, 1), in_shape(g, op, 2)));
}

Shape infer_embedding(const Graph& g, const Op& op) {
  if (op.inputs.size() != 2) fail(op, "expects ids and a table");
  const Tensor& ids = g.tensors[size_t(op.inputs[0])];
  const Tensor& table = g.tensors[size_t(op.inputs[1])];
  if (ids.element != Element::kIds) fail(op, "its ids must be an integer model input");
  if (!table.constant || table.shape.size() != 2) fail(op, "its table must be a constant of shape [rows, dim]");
  Shape out = ids.shape;
  out.push_back(table.shape[1]);
  return out;
}

// CompareOp of a comparison kind, and the one that gives the same result with the operands swapped.
k::CompareOp compare_op(const std::string& kind) {
  if (kind == "eq") return k::kCompareEq;
  if (kind == "ne") return k::kCompareNe;
  if (kind == "lt") return k::kCompareLt;
  if (kind == "le") return k::kCompareLe;
  if (kind == "gt") return k::kCompareGt;
  return k::kCompareGe;
}

k::CompareOp swapped(k::CompareOp op) {
  switch (op) {
    case k::kCompareLt: return k::kCompareGt;
    case k::kCompareLe: return k::kCompareGe;
    case k::kCompareGt: return k::kCompareLt;
    case k::kCompareGe: return k::kCompareLe;
    default: return op;
  }
}

bool compare_values(k::CompareOp op, double a, double b) {
  switch (op) {
    case k::kCompareEq: return a == b;
    case k::kCompareNe: return a != b;
    case k::kCompareLt: return a < b;
    case k::kCompareLe: return a <= b;
    case k::kCompareGt: return a > b;
    default: return a >= b;
  }
}

struct MaskLowering : Lowering {
  using Lowering::Lowering;

  void lower_compare(const Op& op) {
    const Tensor& y = tensor(op.outputs[0]);
    k::CompareOp cmp = compare_op(op.kind);
    // An int8 tensor (quantized, or a mask) against one constant: a table of its 256 values,
    // each compared exactly as a real value.
    for (size_t slot : {size_t(1), size_t(0)}) {
      const Tensor& c = tensor(op.inputs[slot]);
      const Tensor& x = tensor(op.inputs[1 - slot]);
      if (!c.constant || c.numel() != 1 || x.constant || x.shape != y.shape || dtype_of(op.inputs[1 - slot]) != DType::kInt8)
        continue;
      const Quant& q = x.element == Element::kMask ? kMaskQuant : x.quant;
      const k::CompareOp x_first = slot == 1 ? cmp : swapped(cmp);
      std::vector<int8_t> table;
      for (int64_t v = q.type_min(); v <= q.type_max(); ++v)
        table.push_back(int8_t(compare_values(x_first, double(q.scale) * double(v - q.zero_point), double(c.data[0]))));
      const int in = activation(op.inputs[1 - slot]);
      const int tid = constant(y.name + ".table", DType::kInt8, {int32_t(table.size())}, table);
      emit(KernelId::lut_s8, {in, tid}, {activation(op.outputs[0])}, params_bytes(k::LutParams{int32_t(y.numel())}), &op);
      return;
    }
    const BinaryOperands o = binary_operands(op, true);
    if (o.swapped) cmp = swapped(cmp);
    const bool int8_operands = p_.tensors[o.a].dtype == DType::kInt8;
    if (int8_operands != (p_.tensors[o.b].dtype == DType::kInt8))
      fail(op, "compares a mask with a float tensor (in an fp32 program a mask is compared with masks or a scalar)");
    k::CompareParams p{};
    p.outer = o.outer;
    p.inner = o.inner;
    p.in2_mode = o.mode;
    p.op = cmp;
    if (int8_operands) {
      const Tensor& a = tensor(o.a_ir);
      const Quant& aq = a.element == Element::kMask ? kMaskQuant : a.quant;
      const Quant& bq = tensor(o.b_ir).element == Element::kMask ? kMaskQuant : o.b_quant;
      p.input1_offset = -aq.zero_point;
      p.input2_offset = -bq.zero_point;
      set_compare_rescale(p, aq.scale, bq.scale);
    }
    emit(int8_operands ? KernelId::compare_s8 : KernelId::compare_f32, {o.a, o.b}, {activation(op.outputs[0])},
         params_bytes(p), &op);
  }

  // One where operand: a program tensor of the output's shape and layout, or of one value
  // (`single`). A constant is stored in the value's type (int8: the output's spec, which the
  // quantizer gave it); a constant mask as its 0/1 bytes.
  int where_operand(const Op& op, size_t slot, int32_t& single) {
    const int ir = op.inputs[slot];
    const Tensor& t = tensor(ir);
    const Tensor& y = tensor(op.outputs[0]);
    single = t.numel() == 1 ? 1 : 0;
    if (!t.constant) {
      if (single || (t.shape == y.shape && layout_of(t) == layout_of(y))) return activation(ir);
      return broadcast_to(op, ir, y);
    }
    std::vector<float> data = t.data;
    std::vector<int32_t> dims = {1};
    if (!single) {
      data.resize(size_t(y.numel()));
      for (int64_t i = 0; i < y.numel(); ++i) data[size_t(i)] = t.data[size_t(broadcast_index(y.shape, t.shape, i))];
      data = to_physical(data, y.shape, layout_of(y));
      dims = physical_dims(y);
    }
    if (slot == 0) {
      std::vector<int8_t> bytes;
      for (float v : data) bytes.push_back(v != 0.0f);
      return constant(t.name, DType::kInt8, dims, bytes);
    }
    if (is_quantized()) return constant(t.name, DType::kInt8, dims, narrowed<int8_t>(quantize_values(data, spec_of(t))));
    return constant(t.name, DType::kFloat32, dims, data);
  }

  void lower_where(const Op& op) {
    const Tensor& y = tensor(op.outputs[0]);
    if (tensor(op.inputs[0]).element != Element::kMask && !tensor(op.inputs[0]).constant)
      fail(op, "its condition must be a mask (a comparison's result)");
    for (size_t slot : {size_t(1), size_t(2)}) {
      if (tensor(op.inputs[slot]).element != Element::kReal) fail(op, "picks between masks or ids; it takes real values");
    }
    k::WhereParams p{};
    p.count = int32_t(y.numel());
    const int mask = where_operand(op, 0, p.mask_single);
    const int a = where_operand(op, 1, p.a_single);
    const int b = where_operand(op, 2, p.b_single);
    if (is_quantized()) {
      const auto rescale = [&](size_t slot, int32_t& offset, int32_t& multiplier, int32_t& shift) {
        const Quant& q = spec_of(tensor(op.inputs[slot]));
        const QuantizedMultiplier m = quantize_multiplier(double(q.scale) / y.quant.scale);
        offset = -q.zero_point;
        multiplier = m.multiplier;
        shift = m.shift;
      };
      rescale(1, p.a_offset, p.a_multiplier, p.a_shift);
      rescale(2, p.b_offset, p.b_multiplier, p.b_shift);
      p.output_offset = y.quant.zero_point;
    }
    emit(is_quantized() ? KernelId::where_s8 : KernelId::where_f32, {mask, a, b}, {activation(op.outputs[0])}, params_bytes(p),
         &op);
  }

  // The table is stored in the output's element type: int8 in its per-tensor spec (which the
  // output shares), float32 otherwise; the ids are checked when the program runs.
  void lower_embedding(const Op& op) {
    const Tensor& ids = tensor(op.inputs[0]);
    const Tensor& table = tensor(op.inputs[1]);
    const Tensor& y = tensor(op.outputs[0]);
    if (layout_of(y) != Layout::kPlain) fail(op, "its output must keep PyTorch's dim order");
    const int32_t rows = int32_t(table.shape[0]), dim = int32_t(table.shape[1]);
    const int tid = is_quantized() ? constant(table.name, DType::kInt8, {rows, dim}, narrowed<int8_t>(quantized(table)))
                           : constant(table.name, DType::kFloat32, {rows, dim}, table.data);
    if (is_quantized()) {
      p_.tensors[size_t(tid)].scale = y.quant.scale;
      p_.tensors[size_t(tid)].zero_point = y.quant.zero_point;
    }
    const int32_t row_bytes = int32_t(format::storage_bytes(act_dtype(), uint64_t(dim)));
    const k::GatherRowsParams p{int32_t(ids.numel()), rows, row_bytes};
    emit(KernelId::gather_rows, {activation(op.inputs[0]), tid}, {activation(op.outputs[0])}, params_bytes(p), &op);
  }
};

}  // namespace

std::vector<OpDef> mask_ops() {
  const auto comparison = [](const char* kind) {
    return OpDef{kind, infer_compare, lower_with<MaskLowering, &MaskLowering::lower_compare>, kLayoutAgnostic,
                 OutputQuant::kMask, RowLift::kNo, ConstantQuant::kOperandRange};
  };
  return {comparison("eq"), comparison("ne"), comparison("lt"), comparison("le"), comparison("gt"), comparison("ge"),
          {"where", infer_where, lower_with<MaskLowering, &MaskLowering::lower_where>, kLayoutAgnostic,
           OutputQuant::kObserved, RowLift::kNo, ConstantQuant::kOutput},
          {"embedding", infer_embedding, lower_with<MaskLowering, &MaskLowering::lower_embedding>, 0, OutputQuant::kTable,
           RowLift::kNo, ConstantQuant::kOperandRange}};
}

}  // namespace mcuflow::compiler
