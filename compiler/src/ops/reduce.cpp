// Reductions: mean, sum, amax over "dims" (a mean over H and W of an image is a global
// average pool), and argmax (int32 indices, as a model output only).
#include "families.h"
#include "shape_helpers.h"

namespace mcuflow::compiler {
namespace {

// Over "dims" (all dims when empty), keepdim or not.
Shape infer_reduce(const Graph& g, const Op& op) {
  const Shape& x = in_shape(g, op, 0);
  std::vector<bool> reduced(x.size(), op.ints_attr("dims").empty());
  for (int64_t d : op.ints_attr("dims")) reduced[normalize_dim(op, d, x.size())] = true;
  const bool keep = op.int_attr("keepdim") != 0;
  Shape out;
  for (size_t d = 0; d < x.size(); ++d) {
    if (!reduced[d]) out.push_back(x[d]);
    else if (keep) out.push_back(1);
  }
  return out;
}

Shape infer_argmax(const Graph& g, const Op& op) {
  Shape out = in_shape(g, op, 0);
  const int64_t dim = normalize_dim(op, op.int_attr("dim"), out.size());
  if (op.int_attr("keepdim") != 0) out[dim] = 1;
  else out.erase(out.begin() + dim);
  return out;
}

}  // namespace

std::vector<OpDef> reduce_ops() {
  return {
      {"mean", infer_reduce, kImageOpOnRank4, OutputQuant::kInput, RowLift::kDims},
      {"sum", infer_reduce, 0, OutputQuant::kObserved, RowLift::kDims},
      {"amax", infer_reduce, 0, OutputQuant::kInput, RowLift::kDims},
      {"argmax", infer_argmax, 0, OutputQuant::kNone},
  };
}

}  // namespace mcuflow::compiler
