// Softmax, int8, MVE: the row maximum by VMAXV over 16 bytes, then four elements per step:
// exp(x - max) gathered from the prepared table (softmax_table.h) by VLDRW with offsets
// x + 255 - max, summed by VADDVA, and each output as the reference computes it: VQRDMULH by
// inv_sum is the reference's doubling high multiply (same rounding, same saturation), and VRSHL
// by -out_shift its rounding right shift, whose round half up equals the reference's round half
// away from zero on the non-negative products (softmax_table.h). Tails are predicated (VCTP):
// nothing past the row is read or written. Each step reads its four inputs before writing their
// four outputs, as the reference does.
#include <arm_mve.h>

#include <cstring>

#include "mcuflow/kernels/kernels_mve.h"
#include "mcuflow/kernels/softmax_table.h"

namespace mcuflow::kernels {
namespace {

int32_t row_max(const int8_t* in, int32_t depth) {
  int8_t max_v = -128;
  for (int32_t i = 0; i < depth; i += 16) {
    const mve_pred16_t lanes = vctp8q(uint32_t(depth - i));
    max_v = vmaxvq_p_s8(max_v, vldrbq_z_s8(in + i, lanes), lanes);
  }
  return max_v;
}

// exp(x - max) of the (up to) four elements at `in`, 0 in lanes past the row.
inline int32x4_t exp_of(const int32_t* exp_table, const int8_t* in, int32_t offset, mve_pred16_t lanes) {
  const int32x4_t index = vaddq_n_s32(vldrbq_z_s32(in, lanes), offset);  // in [0, 255]
  return vldrwq_gather_shifted_offset_z_s32(exp_table, vreinterpretq_u32_s32(index), lanes);
}

}  // namespace

void softmax_s8_mve(const SoftmaxParams& p, const int8_t* input, const int32_t* exp_table, int8_t* output) {
  const int32_t depth = p.depth;
  for (int32_t r = 0; r < p.rows; ++r, input += depth, output += depth) {
    const int32_t offset = kSoftmaxTableMaxIndex - row_max(input, depth);

    // Entries are non-negative: VRSHR by 12 is softmax_sum_term; VADDVA wraps like the
    // reference's int32 additions.
    int32_t sum_q12 = 0;
    for (int32_t i = 0; i < depth; i += 4) {
      const mve_pred16_t lanes = vctp32q(uint32_t(depth - i));
      sum_q12 = vaddvaq_p_s32(sum_q12, vrshrq_n_s32(exp_of(exp_table, input + i, offset, lanes), 12), lanes);
    }

    const SoftmaxRowScale scale = softmax_row_scale(sum_q12);
    if (scale.out_shift > 31) {  // every probability rounds to 0
      std::memset(output, -128, size_t(depth));
      continue;
    }
    const int32x4_t max_q = vdupq_n_s32(255);
    for (int32_t i = 0; i < depth; i += 4) {
      const mve_pred16_t lanes = vctp32q(uint32_t(depth - i));
      const int32x4_t prod = vqrdmulhq_n_s32(exp_of(exp_table, input + i, offset, lanes), scale.inv_sum);
      const int32x4_t q = vminq_s32(vrshlq_n_s32(prod, -scale.out_shift), max_q);  // in [0, 255]
      vstrbq_p_s32(output + i, vsubq_n_s32(q, 128), lanes);
    }
  }
}

}  // namespace mcuflow::kernels
