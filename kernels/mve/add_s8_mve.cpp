// Element-wise add, int8, MVE: the reference arithmetic (TFLite int8 add) on four int32 lanes
// at a time, for every broadcast mode of BinaryParams. Each lane reads its inputs before its
// output is written, so the output may lie exactly over an input.
#include "mcuflow/kernels/elementwise_tiers.h"
#include "mve_blocks.h"

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

  int32x4_t prepare(int32x4_t x2) const { return input2(vaddq_n_s32(x2, input2_offset)); }
  int32x4_t combine(int32x4_t x1, int32x4_t scaled_x2) const {
    const int32x4_t y = vaddq_n_s32(output(vaddq_s32(input1(vaddq_n_s32(x1, input1_offset)), scaled_x2)), output_offset);
    return vminq_s32(vmaxq_s32(y, act_min), act_max);
  }
};

}  // namespace

void add_s8_mve(const BinaryParams& p, const int8_t* input1, const int8_t* input2, int8_t* output) {
  const Add add(p);
  binary_runs(p, input1, input2, output, [&add](const int8_t* a, const int8_t* b, int32_t b_step, int8_t* out,
                                                int32_t n) { mve::binary_lanes(add, a, b, b_step, out, n); });
}

}  // namespace mcuflow::kernels
