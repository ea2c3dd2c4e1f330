// fc_s8 against a double-precision matrix product of the dequantized inputs.
#include <gtest/gtest.h>

#include "mcuflow/kernels/kernels.h"
#include "test_util.h"

using namespace mcuflow::kernels;
using namespace mcuflow::test;

TEST(FcS8, RandomShapesWithinOneStepOfDouble) {
  Rng rng(3001);
  size_t exact = 0, total = 0;
  for (int i = 0; i < 400; ++i) {
    const int32_t rows = rng.uniform_int(1, 4), in_c = rng.uniform_int(1, 97), out_c = rng.uniform_int(1, 13);
    const bool per_channel = rng.coin();
    const Quant in = random_act_quant(rng);
    std::vector<double> w_scale(per_channel ? out_c : 1);
    for (auto& s : w_scale) s = rng.log_uniform(0.0005, 0.05);
    const auto input = rng.int8s(static_cast<size_t>(rows * in_c));
    const auto weights = rng.int8s(static_cast<size_t>(out_c * in_c), -127, 127);
    std::vector<int32_t> bias(static_cast<size_t>(out_c));
    for (auto& b : bias) b = rng.uniform_int(-30000, 30000);

    std::vector<double> ref;
    for (int32_t r = 0; r < rows; ++r)
      for (int32_t o = 0; o < out_c; ++o) {
        const double ws = w_scale[per_channel ? o : 0];
        double sum = bias[o] * in.scale * ws;
        for (int32_t k = 0; k < in_c; ++k) sum += (input[r * in_c + k] - in.zp) * in.scale * (weights[o * in_c + k] * ws);
        ref.push_back(sum);
      }
    const Quant out = fit_output_quant(ref, rng);
    const ActRange act = random_act(rng, out);
    std::vector<double> real;
    for (double ws : w_scale) real.push_back(in.scale * ws / out.scale);
    std::vector<int32_t> mult, shift, want;
    multipliers_for(real, mult, shift);
    for (double v : ref) want.push_back(quantize_ref(v, out.scale, out.zp, act.lo, act.hi));

    const FcParams p{rows, in_c, out_c, per_channel ? 1 : 0, -in.zp, out.zp, act.lo, act.hi, 0.0f, 0.0f};
    std::vector<int8_t> got(want.size());
    fc_s8(p, input.data(), weights.data(), bias.data(), mult.data(), shift.data(), got.data());
    const Diff d = diff_int8(got, want);
    ASSERT_LE(d.max_abs, 1) << "case " << i;
    exact += d.exact;
    total += d.total;
  }
  EXPECT_GT(static_cast<double>(exact) / total, 0.97);
}

TEST(FcS8, PerTensorUsesFirstMultiplierOnly) {
  // per_channel 0 must never read past multipliers[0] / shifts[0].
  const FcParams p{1, 2, 3, 0, 0, 0, -128, 127, 0.0f, 0.0f};
  const int8_t input[2] = {4, -2};
  const int8_t weights[6] = {1, 1, 2, 0, -3, 5};
  const int32_t mult[1] = {1 << 30}, shift[1] = {0};  // x 0.5
  int8_t out[3];
  fc_s8(p, input, weights, nullptr, mult, shift, out);
  EXPECT_EQ(out[0], 1);   // (4 - 2) / 2
  EXPECT_EQ(out[1], 4);   // 8 / 2
  EXPECT_EQ(out[2], -11); // -22 / 2
}
