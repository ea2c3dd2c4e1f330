// Strided gather with a constant fill (pad, slice, broadcast, upsample), 1-byte elements, scalar
// tier (kernels_scalar.h): the reference's walk (strided_copy_common.h), unit-step rows moved by
// the tier's block copy and fill.
#include "byte_moves.h"
#include "mcuflow/kernels/kernels_scalar.h"
#include "../reference/strided_copy_common.h"

namespace mcuflow::kernels {
namespace {

struct BlockMoves {
  static void copy(const int8_t* from, int8_t* to, int32_t n) { scalar::copy_bytes(n, from, to); }
  static void fill(int8_t* to, int32_t n, int8_t value) { scalar::fill_bytes(n, value, to); }
};

}  // namespace

void strided_copy_b8_scalar(const StridedCopyParams& p, const int8_t* input, int8_t* output) {
  detail::strided_copy<int8_t, BlockMoves>(p, input, output, int8_t(p.fill));
}

}  // namespace mcuflow::kernels
