// Ops that rearrange dims without computing: reshape (a view, or a transposing copy between
// layouts), permute, identity.
#include "families.h"
#include "shape_helpers.h"

namespace mcuflow::compiler {
namespace {

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

}  // namespace

std::vector<OpDef> view_ops() {
  return {
      {"reshape", infer_reshape, kFoldable, OutputQuant::kInput},
      {"permute", infer_permute, kFoldable, OutputQuant::kInput},
      {"identity", same_as_input, kFoldable | kLayoutAgnostic, OutputQuant::kInput, RowLift::kElementwise},
  };
}

}  // namespace mcuflow::compiler
