// Ops that copy elements: pad, slice, expand, upsample_nearest2d (one strided gather), cat,
// and input_rows (split_into_patches with a streamed input: a band of a graph input's rows,
// fetched from the application, shaped as a slice).
#include "families.h"
#include "shape_helpers.h"

namespace mcuflow::compiler {
namespace {

// "pad": PyTorch F.pad order, (before, after) pairs starting from the last dim; negative
// values crop.
Shape infer_pad(const Graph& g, const Op& op) {
  Shape out = in_shape(g, op, 0);
  const auto& pad = op.ints_attr("pad");
  if (pad.size() % 2 != 0 || pad.size() > 2 * out.size()) fail(op, "pad must hold (before, after) pairs for at most every dim");
  for (size_t i = 0; i < pad.size() / 2; ++i) {
    int64_t& d = out[out.size() - 1 - i];
    d += pad[2 * i] + pad[2 * i + 1];
    if (d < 1) fail(op, "padding leaves an empty dimension");
  }
  return out;
}

Shape infer_slice(const Graph& g, const Op& op) {
  Shape out = in_shape(g, op, 0);
  const int64_t dim = normalize_dim(op, op.int_attr("dim"), out.size());
  const int64_t start = op.int_attr("start"), end = op.int_attr("end"), step = op.int_attr("step");
  if (step < 1) fail(op, "slice step must be >= 1");
  if (start < 0 || end > out[dim] || start >= end) fail(op, "slice [" + std::to_string(start) + ", " + std::to_string(end) + ") is empty or outside dim " + std::to_string(dim) + " of " + shape_str(out));
  out[dim] = (end - start + step - 1) / step;
  return out;
}

Shape infer_expand(const Graph& g, const Op& op) {
  const Shape& x = in_shape(g, op, 0);
  Shape out = op.ints_attr("shape");
  if (out.size() < x.size()) fail(op, "cannot expand " + shape_str(x) + " to fewer dims");
  const size_t lead = out.size() - x.size();
  for (size_t d = 0; d < out.size(); ++d) {
    const int64_t have = d < lead ? 1 : x[d - lead];
    if (out[d] == -1 && d >= lead) out[d] = have;
    if (out[d] < 1 || (have != 1 && have != out[d])) fail(op, "cannot expand " + shape_str(x) + " to " + shape_str(op.ints_attr("shape")));
  }
  return out;
}

Shape infer_upsample(const Graph& g, const Op& op) {
  Shape out = in_shape(g, op, 0);
  if (out.size() != 4) fail(op, "expects a 4-D input");
  const auto scale = pair_attr(op, "scale");
  if (scale[0] < 1 || scale[1] < 1) fail(op, "scale factors must be positive integers");
  out[2] *= scale[0];
  out[3] *= scale[1];
  return out;
}

Shape infer_cat(const Graph& g, const Op& op) {
  if (op.inputs.empty()) fail(op, "needs at least one input");
  Shape out = in_shape(g, op, 0);
  const int64_t dim = normalize_dim(op, op.int_attr("dim"), out.size());
  for (size_t i = 1; i < op.inputs.size(); ++i) {
    const Shape& s = in_shape(g, op, i);
    if (s.size() != out.size()) fail(op, "inputs have different ranks");
    for (size_t d = 0; d < s.size(); ++d) {
      if (static_cast<int64_t>(d) != dim && s[d] != out[d]) fail(op, "input shapes differ outside the cat dim");
    }
    out[dim] += s[dim];
  }
  return out;
}

}  // namespace

std::vector<OpDef> copy_ops() {
  return {
      {"pad", infer_pad, kLayoutAgnostic, OutputQuant::kInputWhenValueFits, RowLift::kPad},
      {"slice", infer_slice, kLayoutAgnostic, OutputQuant::kInput, RowLift::kDim},
      {"expand", infer_expand, 0, OutputQuant::kInput},
      {"upsample_nearest2d", infer_upsample, kImageOp, OutputQuant::kInput},
      {"cat", infer_cat, kLayoutAgnostic, OutputQuant::kObserved, RowLift::kDim, ConstantQuant::kOutput},
      {"input_rows", infer_slice, kInternal},
  };
}

}  // namespace mcuflow::compiler
