// Comparisons of two int8 tensors into masks: both moved to one scale as add_s8 moves them.
#include "binary_common.h"
#include "mcuflow/kernels/kernels.h"

namespace mcuflow::kernels {

void compare_s8(const CompareParams& p, const int8_t* input1, const int8_t* input2, int8_t* mask) {
  auto rescaled = [&p](int8_t q, int32_t offset, int32_t multiplier, int32_t shift) {
    return multiply_by_quantized_multiplier(wrapping_left_shift(q + offset, p.left_shift), multiplier, shift);
  };
  detail::binary_elementwise(p, input1, input2, mask, [&](int8_t x1, int8_t x2) {
    const int32_t a = rescaled(x1, p.input1_offset, p.input1_multiplier, p.input1_shift);
    const int32_t b = rescaled(x2, p.input2_offset, p.input2_multiplier, p.input2_shift);
    return static_cast<int8_t>(detail::compare(p.op, a, b));
  });
}

}  // namespace mcuflow::kernels
