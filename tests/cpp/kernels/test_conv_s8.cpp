// conv_s8 against double-precision convolution of the dequantized inputs.
#include <gtest/gtest.h>

#include "mcuflow/kernels/kernels.h"
#include "test_util.h"

using namespace mcuflow::kernels;
using namespace mcuflow::test;

namespace {

struct ConvCase {
  ConvParams p{};
  std::vector<int8_t> input, weights;
  std::vector<int32_t> bias, mult, shift, want;
};

// Builds a random case; out_scale_factor < 1 narrows the output range (forces shift > 0). With
// max_groups > 1, a grouped conv of 1..max_groups groups of up to max_in_c input channels each.
ConvCase make_case(Rng& rng, double out_scale_factor = 1.0, int32_t max_in_c = 7, int32_t max_groups = 1) {
  ConvCase c;
  const Geometry g = random_geometry(rng, true);
  const int32_t groups = max_groups > 1 ? rng.uniform_int(1, max_groups) : 1;
  const int32_t in_c = groups * rng.uniform_int(1, max_in_c), out_c = groups * rng.uniform_int(1, 7);
  const int32_t group_in = in_c / groups, group_out = out_c / groups;
  const Quant in = random_act_quant(rng);
  std::vector<double> w_scale(static_cast<size_t>(out_c));
  for (auto& s : w_scale) s = rng.log_uniform(0.0005, 0.05);
  c.input = rng.int8s(static_cast<size_t>(g.in_h * g.in_w * in_c));
  c.weights = rng.int8s(static_cast<size_t>(out_c * g.k_h * g.k_w * group_in), -127, 127);
  c.bias.resize(static_cast<size_t>(out_c));
  for (auto& b : c.bias) b = rng.uniform_int(-30000, 30000);

  std::vector<double> ref;
  for (int32_t oy = 0; oy < g.out_h; ++oy)
    for (int32_t ox = 0; ox < g.out_w; ++ox)
      for (int32_t oc = 0; oc < out_c; ++oc) {
        double sum = c.bias[oc] * in.scale * w_scale[oc];
        for (int32_t ky = 0; ky < g.k_h; ++ky)
          for (int32_t kx = 0; kx < g.k_w; ++kx) {
            const int32_t iy = oy * g.stride_h - g.pad_top + ky * g.dil_h;
            const int32_t ix = ox * g.stride_w - g.pad_left + kx * g.dil_w;
            if (iy < 0 || iy >= g.in_h || ix < 0 || ix >= g.in_w) continue;
            for (int32_t ic = 0; ic < group_in; ++ic) {
              const double x = (c.input[(iy * g.in_w + ix) * in_c + oc / group_out * group_in + ic] - in.zp) * in.scale;
              const double w = c.weights[((oc * g.k_h + ky) * g.k_w + kx) * group_in + ic] * w_scale[oc];
              sum += x * w;
            }
          }
        ref.push_back(sum);
      }
  Quant out = fit_output_quant(ref, rng);
  out.scale *= out_scale_factor;
  const ActRange act = random_act(rng, out);
  std::vector<double> real(static_cast<size_t>(out_c));
  for (int32_t oc = 0; oc < out_c; ++oc) real[oc] = in.scale * w_scale[oc] / out.scale;
  multipliers_for(real, c.mult, c.shift);
  for (double v : ref) c.want.push_back(quantize_ref(v, out.scale, out.zp, act.lo, act.hi));

  c.p = ConvParams{g.in_h,  g.in_w,     in_c,       g.out_h,    g.out_w,  out_c,  g.k_h,   g.k_w,
                   g.stride_h, g.stride_w, g.pad_top, g.pad_left, g.dil_h, g.dil_w, -in.zp, out.zp,
                   act.lo, act.hi, 0.0f, 0.0f, groups};
  return c;
}

std::vector<int8_t> run(const ConvCase& c) {
  std::vector<int8_t> out(c.want.size());
  conv_s8(c.p, c.input.data(), c.weights.data(), c.bias.data(), c.mult.data(), c.shift.data(), out.data());
  return out;
}

}  // namespace

TEST(ConvS8, RandomShapesWithinOneStepOfDouble) {
  Rng rng(1001);
  size_t exact = 0, total = 0;
  for (int i = 0; i < 400; ++i) {
    const ConvCase c = make_case(rng);
    const Diff d = diff_int8(run(c), c.want);
    ASSERT_LE(d.max_abs, 1) << "case " << i;
    exact += d.exact;
    total += d.total;
  }
  EXPECT_GT(static_cast<double>(exact) / total, 0.97);  // off-by-one only near rounding ties
}

TEST(ConvS8, GroupedWithinOneStepOfDouble) {
  // Windows of a few channels (one column per group) and of many (one dot product per tap).
  Rng rng(1004);
  for (int i = 0; i < 300; ++i) {
    const ConvCase c = make_case(rng, 1.0, i % 2 ? 7 : 40, 5);
    ASSERT_LE(diff_int8(run(c), c.want).max_abs, 1) << "case " << i << ", groups " << c.p.groups;
  }
}

TEST(ConvS8, LargeChannelCounts) {
  Rng rng(1002);
  for (int i = 0; i < 40; ++i) {
    const ConvCase c = make_case(rng, 1.0, 67);
    ASSERT_LE(diff_int8(run(c), c.want).max_abs, 1) << "case " << i;
  }
}

TEST(ConvS8, MultiplierAboveOne) {
  // A narrow output range makes in_scale * w_scale / out_scale > 1: left shift before the
  // high multiply. Most outputs saturate; the rest must still be within one step.
  Rng rng(1003);
  int positive_shifts = 0;
  for (int i = 0; i < 100; ++i) {
    const ConvCase c = make_case(rng, 0.002);
    for (int32_t s : c.shift) positive_shifts += s > 0;
    ASSERT_LE(diff_int8(run(c), c.want).max_abs, 1) << "case " << i;
  }
  EXPECT_GT(positive_shifts, 0);
}

TEST(ConvS8, PaddingContributesNothing) {
  // 3x3 kernel over a single pixel with padding 1: only the centre tap sees data. Were padding
  // read as q = 0 (not the zero point), the other taps would add (0 + 3) * 100 each.
  ConvParams p{1, 1, 1, 1, 1, 1, 3, 3, 1, 1, 1, 1, 1, 1, /*input_offset*/ 3, /*output_offset*/ -1,
               -128, 127, 0.0f, 0.0f};
  const int8_t input[1] = {5};
  int8_t weights[9];
  for (auto& w : weights) w = 100;
  weights[4] = 2;
  const int32_t bias[1] = {4};
  const int32_t mult[1] = {1 << 30}, shift[1] = {0};  // x 0.5
  int8_t out[1];
  conv_s8(p, input, weights, bias, mult, shift, out);
  EXPECT_EQ(out[0], ((5 + 3) * 2 + 4) / 2 - 1);  // 9
}

TEST(ConvS8, NullBiasIsZero) {
  ConvParams p{1, 2, 2, 1, 2, 1, 1, 1, 1, 1, 0, 0, 1, 1, 0, 0, -128, 127, 0.0f, 0.0f};
  const int8_t input[4] = {10, 20, -30, 40};
  const int8_t weights[2] = {1, 2};
  const int32_t mult[1] = {1 << 30}, shift[1] = {1};  // x 1.0
  int8_t out[2];
  conv_s8(p, input, weights, nullptr, mult, shift, out);
  EXPECT_EQ(out[0], 50);
  EXPECT_EQ(out[1], 50);
}
