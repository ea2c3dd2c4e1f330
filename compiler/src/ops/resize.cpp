// upsample_bilinear2d: bilinear resizing of an image to a given size.
#include "families.h"
#include "shape_helpers.h"

namespace mcuflow::compiler {
namespace {

Shape infer_upsample_bilinear(const Graph& g, const Op& op) {
  Shape out = in_shape(g, op, 0);
  if (out.size() != 4) fail(op, "expects a 4-D input");
  const auto size = pair_attr(op, "size");
  if (size[0] < 1 || size[1] < 1) fail(op, "output size must be positive");
  if (!(op.float_attr("scale_h") >= 0.0 && op.float_attr("scale_w") >= 0.0)) fail(op, "scale factors must be positive");
  out[2] = size[0];
  out[3] = size[1];
  return out;
}

}  // namespace

std::vector<OpDef> resize_ops() { return {{"upsample_bilinear2d", infer_upsample_bilinear, kImageOp, OutputQuant::kInput}}; }

}  // namespace mcuflow::compiler
