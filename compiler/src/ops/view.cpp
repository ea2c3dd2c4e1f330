// Ops that rearrange dims without computing: reshape (a view, or a transposing copy between
// layouts), permute, identity.
#include "families.h"
#include "lowering.h"

namespace mcuflow::compiler {
namespace {

// reshape and identity: the values in their order.
std::vector<float> fold_same_values(const Graph& g, const Op& op, const Shape&) {
  return g.tensors[size_t(op.inputs[0])].data;
}

std::vector<int64_t> strides_of(const Shape& s) {
  std::vector<int64_t> st(s.size(), 1);
  for (int i = int(s.size()) - 2; i >= 0; --i) st[i] = st[i + 1] * s[i + 1];
  return st;
}

std::vector<float> fold_permute(const Graph& g, const Op& op, const Shape& out_shape) {
  const Tensor& x = g.tensors[size_t(op.inputs[0])];
  const auto& perm = op.ints_attr("perm");
  const auto in_strides = strides_of(x.shape), out_strides = strides_of(out_shape);
  int64_t n = 1;
  for (int64_t d : out_shape) n *= d;
  std::vector<float> out(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    int64_t src = 0;
    for (size_t d = 0; d < out_shape.size(); ++d) {
      const int64_t p = perm[d] < 0 ? perm[d] + int64_t(perm.size()) : perm[d];
      src += ((i / out_strides[d]) % out_shape[d]) * in_strides[p];
    }
    out[size_t(i)] = x.data[size_t(src)];
  }
  return out;
}

Shape infer_reshape(const Graph& g, const Op& op) {
  const Shape& x = in_shape(g, op, 0);
  Shape out = op.ints_attr("shape");
  int64_t known = 1, infer_at = -1;
  for (size_t i = 0; i < out.size(); ++i) {
    if (out[i] == -1) {
      if (infer_at >= 0) fail(op, "more than one -1 in shape");
      infer_at = static_cast<int64_t>(i);
    } else {
      if (out[i] < 0) fail(op, "negative size in shape");
      known *= out[i];
    }
  }
  int64_t n = 1;
  for (int64_t d : x) n *= d;
  if (infer_at >= 0 && known > 0) out[infer_at] = n / known;
  int64_t m = 1;
  for (int64_t d : out) m *= d;
  if (m != n) fail(op, "cannot reshape " + shape_str(x) + " into " + shape_str(out));
  return out;
}

Shape infer_permute(const Graph& g, const Op& op) {
  const Shape& x = in_shape(g, op, 0);
  const auto& perm = op.ints_attr("perm");
  if (perm.size() != x.size()) fail(op, "perm length does not match rank");
  Shape out(x.size());
  std::vector<bool> seen(x.size(), false);
  for (size_t i = 0; i < perm.size(); ++i) {
    const int64_t p = normalize_dim(op, perm[i], x.size());
    if (seen[p]) fail(op, "perm is not a permutation");
    seen[p] = true;
    out[i] = x[p];
  }
  return out;
}

// A permuting copy moves int16 elements as byte pairs, which takes one more dim.
bool moves_int16(const Graph& g, const Op& op) { return g.tensors[size_t(op.outputs[0])].shape.size() < k::kMaxRank; }

struct ViewLowering : Lowering {
  using Lowering::Lowering;

  // True when `rows` is the NHWC row view (N, C, 1, L) of the channels-last (N, C, L) `x`: both
  // are stored (N, L, C).
  static bool channels_last_row_view(const Tensor& x, const Tensor& rows) {
    return layout_of(x) == Layout::kNhwc && layout_of(rows) == Layout::kNhwc && x.shape.size() == 3 &&
           rows.shape == Shape{x.shape[0], x.shape[1], 1, x.shape[2]};
  }

  void lower_reshape(const Op& op) {
    const Tensor& x = tensor(op.inputs[0]);
    const Tensor& y = tensor(op.outputs[0]);
    int in = activation(op.inputs[0]);
    if (is_quantized() && (x.quant.scale != y.quant.scale || x.quant.zero_point != y.quant.zero_point))
      fail(op, "reshape input and output must share quantization");
    const Layout ly = layout_of(y);
    if (ly == Layout::kFlatNhwc) {  // flatten folded into the following linear layers
      program_of_[op.outputs[0]] = alias(in, y.name, physical_dims(y), op.outputs[0]);
      return;
    }
    if (channels_last_row_view(x, y) || channels_last_row_view(y, x)) {  // the same bytes
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

  // A view of the input.
  void lower_identity(const Op& op) {
    const int in = activation(op.inputs[0]);
    program_of_[op.outputs[0]] = alias(in, tensor(op.outputs[0]).name, p_.tensors[in].dims, op.outputs[0]);
  }
};

}  // namespace

std::vector<OpDef> view_ops() {
  return {
      {"reshape", infer_reshape, lower_with<ViewLowering, &ViewLowering::lower_reshape>, kMovesBytes,
       OutputQuant::kInput, RowLift::kNo, ConstantQuant::kNone, nullptr, moves_int16, nullptr, fold_same_values},
      {"permute", infer_permute, lower_with<ViewLowering, &ViewLowering::lower_permute>, kMovesBytes,
       OutputQuant::kInput, RowLift::kNo, ConstantQuant::kNone, nullptr, moves_int16, nullptr, fold_permute},
      {"identity", same_as_input, lower_with<ViewLowering, &ViewLowering::lower_identity>, kLayoutAgnostic | kMovesBytes,
       OutputQuant::kInput, RowLift::kElementwise, ConstantQuant::kNone, nullptr, always_int16, nullptr,
       fold_same_values},
  };
}

}  // namespace mcuflow::compiler
