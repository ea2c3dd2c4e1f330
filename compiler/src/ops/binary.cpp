// Element-wise binary ops with NumPy broadcasting: add, sub, mul, minimum, maximum.
#include <algorithm>

#include "families.h"
#include "shape_helpers.h"

namespace mcuflow::compiler {
namespace {

Shape broadcast(const Op& op, Shape a, Shape b) {
  const size_t r = std::max(a.size(), b.size());
  a.insert(a.begin(), r - a.size(), 1);
  b.insert(b.begin(), r - b.size(), 1);
  Shape out(r);
  for (size_t i = 0; i < r; ++i) {
    if (a[i] != b[i] && a[i] != 1 && b[i] != 1) fail(op, "shapes " + shape_str(a) + " and " + shape_str(b) + " do not broadcast");
    out[i] = std::max(a[i], b[i]);
  }
  return out;
}

Shape infer_binary(const Graph& g, const Op& op) {
  if (op.inputs.size() != 2) fail(op, "expects two inputs");
  if (op.has_attr("alpha") && op.float_attr("alpha") != 1.0) fail(op, "alpha != 1 is not supported");
  return broadcast(op, in_shape(g, op, 0), in_shape(g, op, 1));
}

constexpr uint32_t kBinary = kLayoutAgnostic | kFusesActivation;

}  // namespace

std::vector<OpDef> binary_ops() {
  const auto binary = [](const char* kind, uint32_t more_traits = 0) {
    return OpDef{kind, infer_binary, kBinary | more_traits, OutputQuant::kObserved, RowLift::kElementwise,
                 ConstantQuant::kOperandRange};
  };
  return {binary("add", kFoldable), binary("sub"), binary("mul", kFoldable), binary("minimum"), binary("maximum")};
}

}  // namespace mcuflow::compiler
