#include "mcuflow/compiler/layout.h"

#include <algorithm>
#include <cstring>

#include "mcuflow/compiler/ir.h"

namespace mcuflow::compiler {
namespace {

// Channels first <-> channels last element copy ([N, C, H, W] <-> [N, H, W, C], and
// [N, C, L] <-> [N, L, C] for 1-D layers); `to_nhwc` chooses the direction.
std::vector<uint8_t> convert(const uint8_t* data, const std::vector<int64_t>& s, format::Layout layout,
                             uint32_t eb, bool to_nhwc) {
  int64_t total = 1;
  for (int64_t d : s) total *= d;
  std::vector<uint8_t> out(size_t(total) * eb);
  if (layout == format::Layout::kPlain) {
    if (total) std::memcpy(out.data(), data, out.size());
    return out;
  }
  if (layout != format::Layout::kNhwc || (s.size() != 3 && s.size() != 4))
    throw CompileError("I/O tensors can only be plain or NHWC (rank 3 or 4)");
  const int64_t n = s[0], c = s[1], spatial = total / std::max<int64_t>(1, n * c);
  for (int64_t b = 0; b < n; ++b)
    for (int64_t ci = 0; ci < c; ++ci)
      for (int64_t p = 0; p < spatial; ++p) {
        const size_t first = size_t((b * c + ci) * spatial + p);
        const size_t last = size_t((b * spatial + p) * c + ci);
        std::memcpy(&out[(to_nhwc ? last : first) * eb], &data[(to_nhwc ? first : last) * eb], eb);
      }
  return out;
}

}  // namespace

std::vector<int64_t> logical_shape_of(const std::vector<int64_t>& dims, format::Layout layout) {
  if (layout != format::Layout::kNhwc || dims.size() < 3) return dims;
  std::vector<int64_t> logical = {dims[0], dims.back()};
  logical.insert(logical.end(), dims.begin() + 1, dims.end() - 1);
  return logical;
}

std::vector<uint8_t> logical_to_physical(const uint8_t* data, const std::vector<int64_t>& shape,
                                         format::Layout layout, uint32_t eb) {
  return convert(data, shape, layout, eb, true);
}

std::vector<uint8_t> physical_to_logical(const uint8_t* data, const std::vector<int64_t>& shape,
                                         format::Layout layout, uint32_t eb) {
  return convert(data, shape, layout, eb, false);
}

}  // namespace mcuflow::compiler
