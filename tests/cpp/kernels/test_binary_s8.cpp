// add_s8 / mul_s8 against double-precision arithmetic on the dequantized inputs, for every
// broadcast mode of input2.
#include <gtest/gtest.h>

#include "mcuflow/compiler/quant_math.h"
#include "mcuflow/kernels/kernels.h"
#include "test_util.h"

using namespace mcuflow::kernels;
using namespace mcuflow::test;

namespace {

struct BinaryCase {
  BinaryParams p{};
  std::vector<int8_t> in1, in2;
  std::vector<int32_t> want;
};

BinaryCase make_case(Rng& rng, bool is_add, int32_t mode) {
  BinaryCase c;
  const int32_t outer = rng.uniform_int(1, 9), inner = rng.uniform_int(1, 13);
  const Quant q1 = random_act_quant(rng), q2 = random_act_quant(rng);
  c.in1 = rng.int8s(static_cast<size_t>(outer * inner));
  c.in2 = rng.int8s(static_cast<size_t>(mode == 0 ? outer * inner : (mode == 1 ? inner : 1)));
  std::vector<double> ref;
  for (int32_t o = 0; o < outer; ++o)
    for (int32_t i = 0; i < inner; ++i) {
      const int32_t n2 = mode == 0 ? o * inner + i : (mode == 1 ? i : 0);
      const double a = (c.in1[o * inner + i] - q1.zp) * q1.scale, b = (c.in2[n2] - q2.zp) * q2.scale;
      ref.push_back(is_add ? a + b : a * b);
    }
  const Quant out = fit_output_quant(ref, rng);
  const ActRange act = random_act(rng, out);
  for (double v : ref) c.want.push_back(quantize_ref(v, out.scale, out.zp, act.lo, act.hi));
  c.p = BinaryParams{};
  c.p.outer = outer;
  c.p.inner = inner;
  c.p.in2_mode = mode;
  c.p.input1_offset = -q1.zp;
  c.p.input2_offset = -q2.zp;
  c.p.output_offset = out.zp;
  c.p.act_min = act.lo;
  c.p.act_max = act.hi;
  if (is_add) {
    const auto r = mcuflow::compiler::add_rescale(q1.scale, q2.scale, out.scale);
    c.p.left_shift = r.left_shift;
    c.p.input1_multiplier = r.input1.multiplier;
    c.p.input1_shift = r.input1.shift;
    c.p.input2_multiplier = r.input2.multiplier;
    c.p.input2_shift = r.input2.shift;
    c.p.output_multiplier = r.output.multiplier;
    c.p.output_shift = r.output.shift;
  } else {
    const auto r = mcuflow::compiler::mul_rescale(q1.scale, q2.scale, out.scale);
    c.p.output_multiplier = r.multiplier;
    c.p.output_shift = r.shift;
  }
  return c;
}

void run_random(bool is_add, uint32_t seed) {
  Rng rng(seed);
  size_t exact = 0, total = 0;
  for (int i = 0; i < 600; ++i) {
    const int32_t mode = i % 3;
    const BinaryCase c = make_case(rng, is_add, mode);
    std::vector<int8_t> out(c.want.size());
    if (is_add) {
      add_s8(c.p, c.in1.data(), c.in2.data(), out.data());
    } else {
      mul_s8(c.p, c.in1.data(), c.in2.data(), out.data());
    }
    const Diff d = diff_int8(out, c.want);
    ASSERT_LE(d.max_abs, 1) << "case " << i << " mode " << mode;
    exact += d.exact;
    total += d.total;
  }
  EXPECT_GT(static_cast<double>(exact) / total, 0.97);
}

BinaryParams identity_add_params() {
  // All scales equal, zero points 0: the rescale chain must reproduce q1 + q2 exactly.
  BinaryParams p{};
  p.outer = 1;
  p.inner = 256;
  p.in2_mode = 2;
  mcuflow::compiler::set_add_rescale(p, mcuflow::compiler::add_rescale(0.1, 0.1, 0.1));
  p.act_min = -128;
  p.act_max = 127;
  return p;
}

}  // namespace

TEST(AddS8, RandomWithinOneStepOfDouble) { run_random(true, 4001); }
TEST(MulS8, RandomWithinOneStepOfDouble) { run_random(false, 4002); }

TEST(AddS8, EqualScalesAddExactly) {
  const BinaryParams p = identity_add_params();
  std::vector<int8_t> a(256), out(256);
  for (int i = 0; i < 256; ++i) a[i] = static_cast<int8_t>(i - 128);
  for (int b = -128; b <= 127; ++b) {
    const int8_t bb = static_cast<int8_t>(b);
    add_s8(p, a.data(), &bb, out.data());
    for (int i = 0; i < 256; ++i) ASSERT_EQ(out[i], clampi(i - 128 + b, -128, 127)) << i << " + " << b;
  }
}

TEST(AddS8, BroadcastModesIndexInput2) {
  BinaryParams p = identity_add_params();
  p.outer = 2;
  p.inner = 3;
  const int8_t a[6] = {0, 0, 0, 10, 10, 10};
  const int8_t b[6] = {1, 2, 3, 4, 5, 6};
  int8_t out[6];
  p.in2_mode = 0;
  add_s8(p, a, b, out);
  EXPECT_EQ(std::vector<int8_t>(out, out + 6), (std::vector<int8_t>{1, 2, 3, 14, 15, 16}));
  p.in2_mode = 1;
  add_s8(p, a, b, out);
  EXPECT_EQ(std::vector<int8_t>(out, out + 6), (std::vector<int8_t>{1, 2, 3, 11, 12, 13}));
  p.in2_mode = 2;
  add_s8(p, a, b, out);
  EXPECT_EQ(std::vector<int8_t>(out, out + 6), (std::vector<int8_t>{1, 1, 1, 11, 11, 11}));
}

TEST(MulS8, UnitScalesMultiplyExactly) {
  BinaryParams p{};
  p.outer = 1;
  p.inner = 256;
  p.in2_mode = 2;
  p.input1_offset = 3;
  p.input2_offset = -2;
  p.output_offset = 5;
  const auto r = mcuflow::compiler::mul_rescale(0.25, 0.5, 0.125);  // x 1.0
  p.output_multiplier = r.multiplier;
  p.output_shift = r.shift;
  p.act_min = -100;
  p.act_max = 100;
  std::vector<int8_t> a(256), out(256);
  for (int i = 0; i < 256; ++i) a[i] = static_cast<int8_t>(i - 128);
  for (int b = -128; b <= 127; b += 5) {
    const int8_t bb = static_cast<int8_t>(b);
    mul_s8(p, a.data(), &bb, out.data());
    for (int i = 0; i < 256; ++i) ASSERT_EQ(out[i], clampi((i - 128 + 3) * (b - 2) + 5, -100, 100));
  }
}
