// Masks and lookups: the comparisons eq, ne, lt, le, gt, ge (a mask of 0/1 bytes out,
// Element::kMask), where (a mask picks between two values, or two masks; masked_fill is a
// where), embedding (rows of a constant table by int32 ids) and the internal mask_to_number (a
// mask read as the numbers 0.0 and 1.0). Every case has an int8 kernel.
#include <bitset>
#include <limits>

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

bool is_mask(const Graph& g, int t) { return g.tensors[size_t(t)].element == Element::kMask; }

bool is_comparison(const std::string& kind) {
  return kind == "eq" || kind == "ne" || kind == "lt" || kind == "le" || kind == "gt" || kind == "ge";
}

// A constant whose every value is 0 or 1: a bool constant, which may stand beside a mask.
bool is_constant_bool(const Graph& g, int t) {
  const Tensor& c = g.tensors[size_t(t)];
  return c.constant && std::all_of(c.data.begin(), c.data.end(), [](float v) { return v == 0.0f || v == 1.0f; });
}

// Whether `op` reads the mask in input `slot` as a mask: the ops that move bytes, comparisons
// with a mask or a constant, where's condition, and where / cat picking between masks.
bool takes_mask(const Graph& g, const Op& op, size_t slot) {
  if (has_trait(op.kind, kMovesBytes)) return slot == 0;
  if (is_comparison(op.kind)) {
    const int other = op.inputs[1 - slot];
    return is_mask(g, other) || g.tensors[size_t(other)].constant;
  }
  if (op.kind == "where" && slot == 0) return true;
  return picks_masks(g, op);
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

// The int8 codes compare_s8 compares, and a set of them (bit q - kCodeMin for code q).
constexpr int kCodeMin = std::numeric_limits<int8_t>::min(), kCodeMax = std::numeric_limits<int8_t>::max();
constexpr int kCodes = kCodeMax - kCodeMin + 1;
using Codes = std::bitset<kCodes>;

// The thresholds compare_s8 can stand for: t in [kCodeMin - 1, kCodeMax + 1], where the lowest
// stands for every t below the codes and the highest for every t above them (they compare alike
// with every int8 q).
constexpr int kLowestThreshold = kCodeMin - 1, kHighestThreshold = kCodeMax + 1;

// Per threshold t from kLowestThreshold: which int8 q pass `q cmp t`.
std::vector<Codes> threshold_patterns(k::CompareOp cmp) {
  std::vector<Codes> patterns;
  for (int t = kLowestThreshold; t <= kHighestThreshold; ++t) {
    Codes passing;
    for (int q = kCodeMin; q <= kCodeMax; ++q) passing[size_t(q - kCodeMin)] = compare_values(cmp, q, t);
    patterns.push_back(passing);
  }
  return patterns;
}

// The int8 code of one of the `agreeing` thresholds when t = code + k, or false.
bool code_for(const std::vector<int>& agreeing, int k, int32_t& code) {
  for (int t : agreeing) {
    const int lo = t == kLowestThreshold ? -1000 : t, hi = t == kHighestThreshold ? 1000 : t;
    const int c = std::clamp(lo - k, kCodeMin, kCodeMax);
    if (c + k >= lo && c + k <= hi) {
      code = c;
      return true;
    }
  }
  return false;
}

// A constant operand of a comparison with int8 values x (spec `xq`, x first: `x cmp c`), as int8
// codes in a spec of x's scale: compare_s8 then compares q - zp with code - zero point exactly, so
// `q cmp code + k` (k = zp - the codes' zero point), and each code is chosen so that this is the
// exact comparison of x's real value with the constant's real value, as the one-constant table
// is. False when no zero point serves every value (constants on both sides of x's range).
bool exact_codes(k::CompareOp cmp, const Quant& xq, const std::vector<float>& values, std::vector<float>& codes,
                 Quant& spec) {
  const std::vector<Codes> patterns = threshold_patterns(cmp);
  std::map<float, std::vector<int>> agreeing;  // per distinct value: the thresholds giving its truth
  for (float v : values) {
    if (std::isnan(v)) return false;
    if (agreeing.count(v)) continue;
    Codes truth;
    for (int q = kCodeMin; q <= kCodeMax; ++q)
      truth[size_t(q - kCodeMin)] = compare_values(cmp, double(xq.scale) * double(q - xq.zero_point), double(v));
    std::vector<int>& ts = agreeing[v];
    for (size_t i = 0; i < patterns.size(); ++i) {
      if (patterns[i] == truth) ts.push_back(kLowestThreshold + int(i));
    }
  }
  for (int distance = 0; distance < kCodes; ++distance) {  // the codes' zero point nearest x's first
    for (int zp : {xq.zero_point - distance, xq.zero_point + distance}) {
      if (zp < kCodeMin || zp > kCodeMax) continue;
      codes.clear();
      int32_t code = 0;
      for (float v : values) {
        if (!code_for(agreeing[v], xq.zero_point - zp, code)) break;
        codes.push_back(float(code));
      }
      if (codes.size() == values.size()) {
        spec = xq;
        spec.zero_point = zp;
        return true;
      }
    }
  }
  return false;
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
    ConstantCodes codes;
    const bool exact = exact_constant_operand(op, cmp, codes);
    const BinaryOperands o = binary_operands(op, true, exact ? &codes : nullptr);
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

  // An int8 activation (quantized, or a mask) against a constant tensor: `codes` for the
  // constant that make compare_s8 compare real values exactly (exact_codes); false for other
  // operands. A constant that no codes serve is refused.
  bool exact_constant_operand(const Op& op, k::CompareOp cmp, ConstantCodes& codes) {
    const int slot = tensor(op.inputs[1]).constant ? 1 : tensor(op.inputs[0]).constant ? 0 : -1;
    if (slot < 0) return false;
    const int x_ir = op.inputs[size_t(1 - slot)];
    const Tensor& c = tensor(op.inputs[size_t(slot)]);
    if (c.numel() == 1 || dtype_of(x_ir) != DType::kInt8) return false;
    const Quant& xq = tensor(x_ir).element == Element::kMask ? kMaskQuant : tensor(x_ir).quant;
    if (!exact_codes(slot == 1 ? cmp : swapped(cmp), xq, c.data, codes.codes, codes.spec)) {
      const double lo = double(xq.scale) * (xq.type_min() - xq.zero_point);
      const double hi = double(xq.scale) * (xq.type_max() - xq.zero_point);
      fail(op, "its constant tensor holds values on both sides of the int8 range [" + std::to_string(lo) + ", " +
                   std::to_string(hi) + "] of the tensor it is compared with: no int8 comparison of one spec gives "
                   "every element exactly (clamp the constant to that range, or compile in fp32)");
    }
    return true;
  }

  // One where operand, IR tensor `ir`: a program tensor of the output's shape and layout, or of
  // one value (`single`). A constant is stored in the value's type (int8: the output's spec, which
  // the quantizer gave it), or as 0/1 bytes when it stands for a mask (`as_mask`: the condition,
  // or a value of a where between masks).
  int where_operand(const Op& op, int ir, bool as_mask, int32_t& single) {
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
    if (as_mask) {
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
    const bool masks = y.element == Element::kMask;  // picks between masks: mask bytes, in every program
    for (size_t slot : {size_t(1), size_t(2)}) {
      if (!masks && tensor(op.inputs[slot]).element != Element::kReal) fail(op, "picks between ids; it takes real values");
    }
    k::WhereParams p{};
    p.count = int32_t(y.numel());
    const int mask = where_operand(op, op.inputs[0], true, p.mask_single);
    const int a = where_operand(op, op.inputs[1], masks, p.a_single);
    const int b = where_operand(op, op.inputs[2], masks, p.b_single);
    if (is_quantized() || masks) {
      const Quant& yq = masks ? kMaskQuant : y.quant;
      const auto rescale = [&](size_t slot, int32_t& offset, int32_t& multiplier, int32_t& shift) {
        const Quant& q = masks ? kMaskQuant : spec_of(tensor(op.inputs[slot]));
        const QuantizedMultiplier m = quantize_multiplier(double(q.scale) / yq.scale);
        offset = -q.zero_point;
        multiplier = m.multiplier;
        shift = m.shift;
      };
      rescale(1, p.a_offset, p.a_multiplier, p.a_shift);
      rescale(2, p.b_offset, p.b_multiplier, p.b_shift);
      p.output_offset = yq.zero_point;
    }
    emit(is_quantized() || masks ? KernelId::where_s8 : KernelId::where_f32, {mask, a, b}, {activation(op.outputs[0])},
         params_bytes(p), &op);
  }

  // A mask as the numbers 0 and 1: int8, a table from its bytes to the output's codes of 0 and 1
  // (kUnitRange); float32, a where between the two.
  void lower_mask_to_number(const Op& op) {
    const Tensor& y = tensor(op.outputs[0]);
    const int in = activation(op.inputs[0]);
    if (is_quantized()) {
      std::vector<int8_t> table;
      for (int v = kMaskQuant.type_min(); v <= kMaskQuant.type_max(); ++v)
        table.push_back(int8_t(quantize_values({v != 0 ? 1.0f : 0.0f}, y.quant)[0]));
      const int tid = constant(y.name + ".table", DType::kInt8, {int32_t(table.size())}, table);
      emit(KernelId::lut_s8, {in, tid}, {activation(op.outputs[0])}, params_bytes(k::LutParams{int32_t(y.numel())}), &op);
      return;
    }
    k::WhereParams p{};
    p.count = int32_t(y.numel());
    p.a_single = p.b_single = 1;
    const int one = constant(y.name + ".one", DType::kFloat32, {1}, std::vector<float>{1.0f});
    const int zero = constant(y.name + ".zero", DType::kFloat32, {1}, std::vector<float>{0.0f});
    emit(KernelId::where_f32, {in, one, zero}, {activation(op.outputs[0])}, params_bytes(p), &op);
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

bool picks_masks(const Graph& g, const Op& op) {
  if (op.kind == "cat")
    return std::all_of(op.inputs.begin(), op.inputs.end(), [&](int t) { return is_mask(g, t); });
  if (op.kind != "where" || op.inputs.size() != 3) return false;
  const int a = op.inputs[1], b = op.inputs[2];
  return (is_mask(g, a) || is_mask(g, b)) && (is_mask(g, a) || is_constant_bool(g, a)) &&
         (is_mask(g, b) || is_constant_bool(g, b));
}

void read_masks_as_numbers(Graph& g, Op& op) {
  for (size_t slot = 0; slot < op.inputs.size(); ++slot) {
    const int m = op.inputs[slot];
    if (!is_mask(g, m) || takes_mask(g, op, slot)) continue;
    Tensor number;
    number.name = g.tensors[size_t(m)].name + ".number";
    number.shape = g.tensors[size_t(m)].shape;
    const int y = g.add_tensor(number);
    g.ops.push_back(Op{"mask_to_number", {m}, {y}, {}, op.source});
    op.inputs[slot] = y;
  }
}

std::vector<OpDef> mask_ops() {
  const auto comparison = [](const char* kind) {
    return OpDef{kind, infer_compare, lower_with<MaskLowering, &MaskLowering::lower_compare>, kLayoutAgnostic,
                 OutputQuant::kMask, RowLift::kNo, ConstantQuant::kOperandRange};
  };
  return {comparison("eq"), comparison("ne"), comparison("lt"), comparison("le"), comparison("gt"), comparison("ge"),
          {"where", infer_where, lower_with<MaskLowering, &MaskLowering::lower_where>, kLayoutAgnostic,
           OutputQuant::kObserved, RowLift::kNo, ConstantQuant::kOutput},
          {"embedding", infer_embedding, lower_with<MaskLowering, &MaskLowering::lower_embedding>, 0, OutputQuant::kTable,
           RowLift::kNo, ConstantQuant::kOperandRange},
          {"mask_to_number", same_as_input, lower_with<MaskLowering, &MaskLowering::lower_mask_to_number>,
           kInternal | kLayoutAgnostic, OutputQuant::kUnitRange}};
}

}  // namespace mcuflow::compiler
