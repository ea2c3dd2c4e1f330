// The arithmetic of the DSP element-wise kernels (elementwise_tiers.h, kernels_dsp.h
// DspOutputStage; smmlar has a portable form) against the reference kernels add_s8 / mul_s8,
// on random parameters over the whole range the reference check accepts: every output shift
// from -31 (beyond the folded range) to 30, any multiplier, offsets and activation range. The
// shortcuts must equal the reference wherever add_tables_fit / mul_product_fits admit the op.
#include <gtest/gtest.h>

#include "mcuflow/kernels/elementwise_tiers.h"
#include "mcuflow/kernels/kernels.h"
#include "mcuflow/kernels/kernels_dsp.h"
#include "test_util.h"

using namespace mcuflow::kernels;
using namespace mcuflow::test;

namespace {

BinaryParams random_params(Rng& rng) {
  BinaryParams p{};
  p.outer = p.inner = 1;
  p.input1_offset = rng.uniform_int(-127, 128);
  p.input2_offset = rng.uniform_int(-127, 128);
  p.output_offset = rng.uniform_int(-128, 127);
  p.left_shift = rng.uniform_int(0, 20);
  p.input1_multiplier = rng.uniform_int(0, INT32_MAX);
  p.input2_multiplier = rng.uniform_int(0, INT32_MAX);
  p.output_multiplier = rng.uniform_int(0, 3) == 0 ? rng.uniform_int(0, INT32_MAX) : rng.uniform_int(1 << 30, INT32_MAX);
  p.input1_shift = rng.uniform_int(-31, 2);
  p.input2_shift = rng.uniform_int(-31, 2);
  p.output_shift = rng.uniform_int(-31, 14);
  p.act_min = rng.uniform_int(-128, 127);
  p.act_max = rng.uniform_int(p.act_min, 127);
  return p;
}

int8_t stage_output(const BinaryParams& p, int32_t v, bool folded_form) {
  const DspOutputStage stage(p.output_multiplier, p.output_shift, p.output_offset);
  return int8_t(clampi(folded_form ? stage.folded_output(v) : stage(v), p.act_min, p.act_max));
}

}  // namespace

TEST(ElementwiseTiers, AddTablesAndOutputStageEqualTheReference) {
  Rng rng(9101);
  int admitted = 0, folded = 0;
  for (int trial = 0; trial < 3000; ++trial) {
    const BinaryParams p = random_params(rng);
    if (!add_tables_fit(p)) continue;
    ++admitted;
    const bool is_folded = DspOutputStage(p.output_multiplier, p.output_shift, p.output_offset).folded;
    folded += is_folded;
    for (int k = 0; k < 64; ++k) {
      const int8_t x1 = int8_t(rng.uniform_int(-128, 127)), x2 = int8_t(rng.uniform_int(-128, 127));
      int8_t expected;
      add_s8(p, &x1, &x2, &expected);
      const int32_t v = add_table_entry(p, 0, uint8_t(x1)) + add_table_entry(p, 1, uint8_t(x2));
      ASSERT_EQ(stage_output(p, v, false), expected) << "trial " << trial << " shift " << p.output_shift;
      if (is_folded) ASSERT_EQ(stage_output(p, v, true), expected) << "trial " << trial;
    }
  }
  EXPECT_GT(admitted, 1000);
  EXPECT_GT(folded, 100);
  EXPECT_GT(admitted - folded, 100);  // beyond the folded range (and no right shift at all)
}

TEST(ElementwiseTiers, MulOutputStageEqualsTheReference) {
  Rng rng(9102);
  int admitted = 0, folded = 0;
  for (int trial = 0; trial < 3000; ++trial) {
    const BinaryParams p = random_params(rng);
    if (!mul_product_fits(p)) continue;
    ++admitted;
    const bool is_folded = DspOutputStage(p.output_multiplier, p.output_shift, p.output_offset).folded;
    folded += is_folded;
    const int32_t pre_shift = 1 + (p.output_shift > 0 ? p.output_shift : 0);
    for (int k = 0; k < 64; ++k) {
      // The extremes of the offset inputs as often as random ones.
      const int8_t x1 = int8_t(k % 4 == 0 ? -128 : k % 4 == 1 ? 127 : rng.uniform_int(-128, 127));
      const int8_t x2 = int8_t(k % 3 == 0 ? -128 : k % 3 == 1 ? 127 : rng.uniform_int(-128, 127));
      int8_t expected;
      mul_s8(p, &x1, &x2, &expected);
      const int32_t v = int32_t(uint32_t((x1 + p.input1_offset) * (x2 + p.input2_offset)) << pre_shift);
      ASSERT_EQ(stage_output(p, v, false), expected) << "trial " << trial << " shift " << p.output_shift;
      if (is_folded) ASSERT_EQ(stage_output(p, v, true), expected) << "trial " << trial;
    }
  }
  EXPECT_GT(admitted, 1000);
  EXPECT_GT(folded, 100);
  EXPECT_GT(admitted - folded, 100);
}

TEST(ElementwiseTiers, RulesRejectWhatWouldOverflow) {
  BinaryParams p{};
  p.input1_offset = p.input2_offset = 128;  // |x + offset| up to 255
  p.output_shift = 15;                      // 255^2 * 2^16 > INT32_MAX
  EXPECT_FALSE(mul_product_fits(p));
  p.output_shift = 14;                      // 255^2 * 2^15 < INT32_MAX
  EXPECT_TRUE(mul_product_fits(p));
  p.left_shift = 20;
  p.input1_multiplier = p.input2_multiplier = INT32_MAX;
  p.input1_shift = p.input2_shift = 0;  // rescaled inputs near 255 * 2^20 each
  p.output_shift = 2;
  EXPECT_FALSE(add_tables_fit(p));
  p.output_shift = -20;
  EXPECT_TRUE(add_tables_fit(p));
}
