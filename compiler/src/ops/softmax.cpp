// softmax along any dim (the kernel works on the last physical axis).
#include "families.h"
#include "shape_helpers.h"

namespace mcuflow::compiler {
namespace {

Shape infer_softmax(const Graph& g, const Op& op) {
  const Shape& x = in_shape(g, op, 0);
  normalize_dim(op, op.int_attr("dim"), x.size());
  return x;
}

}  // namespace

std::vector<OpDef> softmax_ops() { return {{"softmax", infer_softmax, 0, OutputQuant::kSoftmax}}; }

}  // namespace mcuflow::compiler
