// Strided gather with a constant fill (pad, slice, broadcast, upsample), 1-byte elements, mve
// tier (kernels_mve.h): the reference's walk (strided_copy_common.h), unit-step rows moved by
// the tier's block copy and fill.
#include "mve_blocks.h"
#include "../reference/strided_copy_common.h"

namespace mcuflow::kernels {
namespace {

struct BlockMoves {
  static void copy(const int8_t* from, int8_t* to, int32_t n) { mve::copy_bytes(n, from, to); }
  static void fill(int8_t* to, int32_t n, int8_t value) { mve::fill_bytes(n, value, to); }
};

}  // namespace

void strided_copy_b8_mve(const StridedCopyParams& p, const int8_t* input, int8_t* output) {
  detail::strided_copy<int8_t, BlockMoves>(p, input, output, int8_t(p.fill));
}

}  // namespace mcuflow::kernels
