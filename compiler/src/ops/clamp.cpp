// relu and clamp: standalone, or fused into the op before them (fuse_activations).
#include <limits>

#include "families.h"
#include "shape_helpers.h"

namespace mcuflow::compiler {
namespace {

Shape infer_clamp(const Graph& g, const Op& op) {
  if (!(op.float_attr("min") <= op.float_attr("max"))) fail(op, "min must not exceed max");
  return in_shape(g, op, 0);
}

}  // namespace

bool clamp_bounds(const Op& op, float& lo, float& hi) {
  if (op.kind == "relu") {
    lo = 0.0f;
    hi = std::numeric_limits<float>::infinity();
    return true;
  }
  if (op.kind == "clamp") {
    lo = float(op.float_attr("min"));
    hi = float(op.float_attr("max"));
    return true;
  }
  return false;
}

std::vector<OpDef> clamp_ops() {
  return {
      {"relu", same_as_input, kLayoutAgnostic, OutputQuant::kInput, RowLift::kElementwise},
      {"clamp", infer_clamp, kLayoutAgnostic, OutputQuant::kInput, RowLift::kElementwise},
  };
}

}  // namespace mcuflow::compiler
