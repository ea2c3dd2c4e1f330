// Comparisons of two int8 tensors into masks: the real values compared exactly (CompareParams).
#include "binary_common.h"
#include "mcuflow/kernels/kernels.h"

namespace mcuflow::kernels {

void compare_s8(const CompareParams& p, const int8_t* input1, const int8_t* input2, int8_t* mask) {
  auto scaled = [](int8_t q, int32_t offset, int32_t multiplier, int32_t shift) {
    return int64_t(q + offset) * multiplier * (int64_t{1} << shift);
  };
  detail::binary_elementwise(p, input1, input2, mask, [&](int8_t x1, int8_t x2) {
    const int64_t a = scaled(x1, p.input1_offset, p.input1_multiplier, p.input1_shift);
    const int64_t b = scaled(x2, p.input2_offset, p.input2_multiplier, p.input2_shift);
    return static_cast<int8_t>(detail::compare(p.op, a, b));
  });
}

}  // namespace mcuflow::kernels
