// Element-wise add, int8, MVE: the reference arithmetic (TFLite int8 add) on four int32 lanes
// at a time, for every broadcast mode of BinaryParams. Each lane reads its inputs before its
// output is written, so the output may lie exactly over an input.
#include "mcuflow/kernels/elementwise_tiers.h"
#include "mcuflow/kernels/kernels_mve.h"

namespace mcuflow::kernels {
namespace {

using mve::Rescale;

struct Add {
  Rescale input1, input2, output;
  int32_t input1_offset, input2_offset, output_offset;
  int32x4_t act_min, act_max;

  explicit Add(const BinaryParams& p)
      : input1(p.left_shift, p.input1_multiplier, p.input1_shift),
        input2(p.left_shift, p.input2_multiplier, p.input2_shift),
        output(0, p.output_multiplier, p.output_shift),
        input1_offset(p.input1_offset),
        input2_offset(p.input2_offset),
        output_offset(p.output_offset),
        act_min(vdupq_n_s32(p.act_min)),
        act_max(vdupq_n_s32(p.act_max)) {}

  int32x4_t scaled2(int32x4_t x2) const { return input2(vaddq_n_s32(x2, input2_offset)); }
  int32x4_t sum(int32x4_t x1, int32x4_t scaled_x2) const {
    const int32x4_t y = vaddq_n_s32(output(vaddq_s32(input1(vaddq_n_s32(x1, input1_offset)), scaled_x2)), output_offset);
    return vminq_s32(vmaxq_s32(y, act_min), act_max);
  }
};

// out[i] = a[i] + b[i] for i < n (b_step 1), or a[i] + b[0] scaled once (b_step 0).
void add_run(const Add& add, const int8_t* a, const int8_t* b, int32_t b_step, int8_t* out, int32_t n) {
  const int32x4_t b_fixed = add.scaled2(vdupq_n_s32(*b));
  int32_t i = 0;
  for (; i + 4 <= n; i += 4) {
    const int32x4_t scaled_b = b_step ? add.scaled2(vldrbq_s32(b + i)) : b_fixed;
    vstrbq_s32(out + i, add.sum(vldrbq_s32(a + i), scaled_b));
  }
  if (i < n) {
    const mve_pred16_t valid = vctp32q(uint32_t(n - i));
    const int32x4_t scaled_b = b_step ? add.scaled2(vldrbq_z_s32(b + i, valid)) : b_fixed;
    vstrbq_p_s32(out + i, add.sum(vldrbq_z_s32(a + i, valid), scaled_b), valid);
  }
}

}  // namespace

void add_s8_mve(const BinaryParams& p, const int8_t* input1, const int8_t* input2, int8_t* output) {
  const Add add(p);
  binary_runs(p, input1, input2, output, [&add](const int8_t* a, const int8_t* b, int32_t b_step, int8_t* out,
                                                int32_t n) { add_run(add, a, b, b_step, out, n); });
}

}  // namespace mcuflow::kernels
