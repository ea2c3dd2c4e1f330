// sub / minimum / maximum, int8 and float32, against double arithmetic on the dequantized
// inputs, for every broadcast mode of input2.
#include <gtest/gtest.h>

#include <algorithm>

#include "mcuflow/compiler/quant_math.h"
#include "mcuflow/kernels/kernels.h"
#include "test_util.h"

using namespace mcuflow::kernels;
using namespace mcuflow::test;
using mcuflow::compiler::quantize_multiplier;

namespace {

enum class Op { kSub, kMinimum, kMaximum };

double apply(Op op, double a, double b) {
  return op == Op::kSub ? a - b : op == Op::kMinimum ? std::min(a, b) : std::max(a, b);
}

void check(Op op, uint32_t seed) {
  Rng rng(seed);
  for (int it = 0; it < 300; ++it) {
    const int32_t mode = it % 3, outer = rng.uniform_int(1, 7), inner = rng.uniform_int(1, 11);
    const Quant q1 = random_act_quant(rng), q2 = random_act_quant(rng);
    const auto in1 = rng.int8s(size_t(outer * inner));
    const auto in2 = rng.int8s(size_t(mode == 0 ? outer * inner : (mode == 1 ? inner : 1)));
    std::vector<double> ref;
    std::vector<float> f1, f2;
    for (int8_t v : in1) f1.push_back(float((v - q1.zp) * q1.scale));
    for (int8_t v : in2) f2.push_back(float((v - q2.zp) * q2.scale));
    for (int32_t o = 0; o < outer; ++o)
      for (int32_t i = 0; i < inner; ++i) {
        const int32_t n2 = mode == 0 ? o * inner + i : (mode == 1 ? i : 0);
        ref.push_back(apply(op, f1[size_t(o * inner + i)], f2[size_t(n2)]));
      }
    const Quant out = fit_output_quant(ref, rng);
    const ActRange act = random_act(rng, out);
    BinaryParams p{};
    p.outer = outer;
    p.inner = inner;
    p.in2_mode = mode;
    p.input1_offset = -q1.zp;
    p.input2_offset = -q2.zp;
    p.output_offset = out.zp;
    p.act_min = act.lo;
    p.act_max = act.hi;
    p.act_min_f = -3.4e38f;
    p.act_max_f = 3.4e38f;
    if (op == Op::kSub) {
      mcuflow::compiler::set_add_rescale(p, mcuflow::compiler::add_rescale(q1.scale, q2.scale, out.scale));
    } else {
      const auto m1 = quantize_multiplier(q1.scale / out.scale), m2 = quantize_multiplier(q2.scale / out.scale);
      p.input1_multiplier = m1.multiplier;
      p.input1_shift = m1.shift;
      p.input2_multiplier = m2.multiplier;
      p.input2_shift = m2.shift;
    }
    std::vector<int8_t> got(ref.size());
    std::vector<float> got_f(ref.size());
    auto s8 = op == Op::kSub ? sub_s8 : op == Op::kMinimum ? minimum_s8 : maximum_s8;
    auto f32 = op == Op::kSub ? sub_f32 : op == Op::kMinimum ? minimum_f32 : maximum_f32;
    s8(p, in1.data(), in2.data(), got.data());
    f32(p, f1.data(), f2.data(), got_f.data());
    for (size_t i = 0; i < ref.size(); ++i) {
      ASSERT_LE(std::abs(got[i] - quantize_ref(ref[i], out.scale, out.zp, act.lo, act.hi)), 1) << "case " << it;
      ASSERT_NEAR(got_f[i], ref[i], 1e-5 * std::fabs(ref[i]) + 1e-7) << "case " << it;
    }
  }
}

}  // namespace

TEST(SubS8F32, AgainstDouble) { check(Op::kSub, 9401); }
TEST(MinimumS8F32, AgainstDouble) { check(Op::kMinimum, 9402); }
TEST(MaximumS8F32, AgainstDouble) { check(Op::kMaximum, 9403); }
