#include "shape_helpers.h"

#include <algorithm>

namespace mcuflow::compiler {

void fail(const Op& op, const std::string& why) { throw CompileError(op.where() + ": " + why); }

const Shape& in_shape(const Graph& g, const Op& op, size_t i) {
  if (i >= op.inputs.size()) fail(op, "expects at least " + std::to_string(i + 1) + " inputs");
  return g.tensors.at(op.inputs[i]).shape;
}

Shape broadcast_shapes(const Op& op, Shape a, Shape b) {
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

int64_t normalize_dim(const Op& op, int64_t dim, size_t rank) {
  const int64_t r = static_cast<int64_t>(rank);
  if (dim < -r || dim >= r) fail(op, "dim " + std::to_string(dim) + " out of range for rank " + std::to_string(rank));
  return dim < 0 ? dim + r : dim;
}

std::vector<int64_t> pair_attr(const Op& op, const std::string& name) {
  std::vector<int64_t> v = op.ints_attr(name);
  if (v.size() == 1) v.push_back(v[0]);
  if (v.size() != 2) fail(op, "'" + name + "' must have 2 values");
  return v;
}

int64_t window_out(int64_t in, int64_t k, int64_t stride, int64_t pad, int64_t pad_end, int64_t dil, bool ceil_mode) {
  const int64_t span = in + pad + pad_end - dil * (k - 1) - 1;
  int64_t out = (ceil_mode ? (span + stride - 1) / stride : span / stride) + 1;
  // PyTorch: with ceil_mode the last window must start inside the input or left padding.
  if (ceil_mode && (out - 1) * stride >= in + pad) --out;
  return out;
}

std::vector<int64_t> end_padding(const Op& op, const std::vector<int64_t>& pad) {
  if (!op.has_attr("padding_end")) return pad;
  std::vector<int64_t> end = pair_attr(op, "padding_end");
  if (end[0] < 0 || end[1] < 0) fail(op, "padding must be >= 0");
  return end;
}

Shape same_as_input(const Graph& g, const Op& op) { return in_shape(g, op, 0); }

}  // namespace mcuflow::compiler
