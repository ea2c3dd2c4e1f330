// Strided gather with a constant fill (pad, slice, broadcast, upsample), 1-byte elements, dsp
// tier (kernels_dsp.h): the reference's walk (strided_copy_common.h), unit-step rows moved by
// the tier's block copy and fill.
#include "dsp_blocks.h"
#include "../reference/strided_copy_common.h"

namespace mcuflow::kernels {
namespace {

struct BlockMoves {
  static void copy(const int8_t* from, int8_t* to, int32_t n) { dsp::copy_bytes(n, from, to); }
  static void fill(int8_t* to, int32_t n, int8_t value) { dsp::fill_bytes(n, value, to); }
};

}  // namespace

void strided_copy_b8_dsp(const StridedCopyParams& p, const int8_t* input, int8_t* output) {
  detail::strided_copy<int8_t, BlockMoves>(p, input, output, int8_t(p.fill));
}

}  // namespace mcuflow::kernels
