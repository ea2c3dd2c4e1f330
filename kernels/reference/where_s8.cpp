// torch.where, int8: the value the mask picks, requantized to the output's scale.
#include "mcuflow/kernels/arith.h"
#include "mcuflow/kernels/kernels.h"

namespace mcuflow::kernels {

void where_s8(const WhereParams& p, const int8_t* mask, const int8_t* a, const int8_t* b, int8_t* output) {
  for (int32_t i = 0; i < p.count; ++i) {
    const bool pick_a = mask[p.mask_single ? 0 : i] != 0;
    const int32_t v = pick_a ? multiply_by_quantized_multiplier(a[p.a_single ? 0 : i] + p.a_offset, p.a_multiplier, p.a_shift)
                             : multiply_by_quantized_multiplier(b[p.b_single ? 0 : i] + p.b_offset, p.b_multiplier, p.b_shift);
    output[i] = static_cast<int8_t>(clamp_i32(v + p.output_offset, -128, 127));
  }
}

}  // namespace mcuflow::kernels
