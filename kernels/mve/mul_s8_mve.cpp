// Element-wise multiply, int8, MVE: the reference arithmetic (TFLite int8 mul) on four int32
// lanes at a time, for every broadcast mode of BinaryParams. The product of the offset inputs
// is exact in int32 (|product| <= 255^2) and mve::Rescale is the reference's
// multiply_by_quantized_multiplier. Each lane reads its inputs before its output is written, so
// the output may lie exactly over an input.
#include "mcuflow/kernels/elementwise_tiers.h"
#include "mve_blocks.h"

namespace mcuflow::kernels {
namespace {

struct Mul {
  mve::Rescale output;
  int32_t input1_offset, input2_offset, output_offset;
  int32x4_t act_min, act_max;

  explicit Mul(const BinaryParams& p)
      : output(0, p.output_multiplier, p.output_shift),
        input1_offset(p.input1_offset),
        input2_offset(p.input2_offset),
        output_offset(p.output_offset),
        act_min(vdupq_n_s32(p.act_min)),
        act_max(vdupq_n_s32(p.act_max)) {}

  int32x4_t prepare(int32x4_t x2) const { return vaddq_n_s32(x2, input2_offset); }
  int32x4_t combine(int32x4_t x1, int32x4_t offset_x2) const {
    const int32x4_t y = vaddq_n_s32(output(vmulq_s32(vaddq_n_s32(x1, input1_offset), offset_x2)), output_offset);
    return vminq_s32(vmaxq_s32(y, act_min), act_max);
  }
};

}  // namespace

void mul_s8_mve(const BinaryParams& p, const int8_t* input1, const int8_t* input2, int8_t* output) {
  const Mul mul(p);
  binary_runs(p, input1, input2, output, [&mul](const int8_t* a, const int8_t* b, int32_t b_step, int8_t* out,
                                                int32_t n) { mve::binary_lanes(mul, a, b, b_step, out, n); });
}

}  // namespace mcuflow::kernels
