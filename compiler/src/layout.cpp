#include "mcuflow/compiler/layout.h"

#include <cstring>

#include "mcuflow/compiler/ir.h"

namespace mcuflow::compiler {
namespace {

// NCHW <-> NHWC element copy; `to_nhwc` chooses the direction.
std::vector<uint8_t> convert(const uint8_t* data, const std::vector<int64_t>& s, format::Layout layout,
                             uint32_t eb, bool to_nhwc) {
  int64_t total = 1;
  for (int64_t d : s) total *= d;
  std::vector<uint8_t> out(size_t(total) * eb);
  if (layout == format::Layout::kPlain) {
    if (total) std::memcpy(out.data(), data, out.size());
    return out;
  }
  if (layout != format::Layout::kNhwc || s.size() != 4)
    throw CompileError("I/O tensors can only be plain or NHWC");
  const int64_t n = s[0], c = s[1], h = s[2], w = s[3];
  for (int64_t b = 0; b < n; ++b)
    for (int64_t ci = 0; ci < c; ++ci)
      for (int64_t y = 0; y < h; ++y)
        for (int64_t x = 0; x < w; ++x) {
          const size_t nchw = size_t(((b * c + ci) * h + y) * w + x);
          const size_t nhwc = size_t(((b * h + y) * w + x) * c + ci);
          std::memcpy(&out[(to_nhwc ? nhwc : nchw) * eb], &data[(to_nhwc ? nchw : nhwc) * eb], eb);
        }
  return out;
}

}  // namespace

std::vector<uint8_t> logical_to_physical(const uint8_t* data, const std::vector<int64_t>& shape,
                                         format::Layout layout, uint32_t eb) {
  return convert(data, shape, layout, eb, true);
}

std::vector<uint8_t> physical_to_logical(const uint8_t* data, const std::vector<int64_t>& shape,
                                         format::Layout layout, uint32_t eb) {
  return convert(data, shape, layout, eb, false);
}

}  // namespace mcuflow::compiler
