// dwconv_s8 against double-precision depthwise convolution of the dequantized inputs.
#include <gtest/gtest.h>

#include "mcuflow/kernels/kernels.h"
#include "test_util.h"

using namespace mcuflow::kernels;
using namespace mcuflow::test;

namespace {

struct DwCase {
  DwConvParams p{};
  std::vector<int8_t> input, weights;
  std::vector<int32_t> bias, mult, shift, want;
};

DwCase make_case(Rng& rng, int32_t max_c) {
  DwCase c;
  const Geometry g = random_geometry(rng, true);
  const int32_t in_c = rng.uniform_int(1, max_c), ch_mult = rng.uniform_int(1, 3);
  const int32_t out_c = in_c * ch_mult;
  const Quant in = random_act_quant(rng);
  std::vector<double> w_scale(static_cast<size_t>(out_c));
  for (auto& s : w_scale) s = rng.log_uniform(0.001, 0.1);
  c.input = rng.int8s(static_cast<size_t>(g.in_h * g.in_w * in_c));
  c.weights = rng.int8s(static_cast<size_t>(g.k_h * g.k_w * out_c), -127, 127);
  c.bias.resize(static_cast<size_t>(out_c));
  for (auto& b : c.bias) b = rng.uniform_int(-5000, 5000);

  std::vector<double> ref;
  for (int32_t oy = 0; oy < g.out_h; ++oy)
    for (int32_t ox = 0; ox < g.out_w; ++ox)
      for (int32_t oc = 0; oc < out_c; ++oc) {
        const int32_t ic = oc / ch_mult;  // output channel ic*ch_mult+m reads input channel ic
        double sum = c.bias[oc] * in.scale * w_scale[oc];
        for (int32_t ky = 0; ky < g.k_h; ++ky)
          for (int32_t kx = 0; kx < g.k_w; ++kx) {
            const int32_t iy = oy * g.stride_h - g.pad_top + ky * g.dil_h;
            const int32_t ix = ox * g.stride_w - g.pad_left + kx * g.dil_w;
            if (iy < 0 || iy >= g.in_h || ix < 0 || ix >= g.in_w) continue;
            sum += (c.input[(iy * g.in_w + ix) * in_c + ic] - in.zp) * in.scale *
                   (c.weights[(ky * g.k_w + kx) * out_c + oc] * w_scale[oc]);
          }
        ref.push_back(sum);
      }
  const Quant out = fit_output_quant(ref, rng);
  const ActRange act = random_act(rng, out);
  std::vector<double> real(static_cast<size_t>(out_c));
  for (int32_t oc = 0; oc < out_c; ++oc) real[oc] = in.scale * w_scale[oc] / out.scale;
  multipliers_for(real, c.mult, c.shift);
  for (double v : ref) c.want.push_back(quantize_ref(v, out.scale, out.zp, act.lo, act.hi));
  c.p = DwConvParams{g.in_h,     g.in_w,     in_c,      g.out_h,    g.out_w, out_c,   ch_mult,
                     g.k_h,      g.k_w,      g.stride_h, g.stride_w, g.pad_top, g.pad_left, g.dil_h,
                     g.dil_w,    -in.zp,     out.zp,    act.lo,     act.hi,  0.0f,    0.0f};
  return c;
}

}  // namespace

TEST(DwConvS8, RandomShapesWithinOneStepOfDouble) {
  Rng rng(2001);
  size_t exact = 0, total = 0;
  int mult_cases = 0;
  for (int i = 0; i < 500; ++i) {
    const DwCase c = make_case(rng, 9);
    mult_cases += c.p.ch_mult > 1;
    std::vector<int8_t> out(c.want.size());
    dwconv_s8(c.p, c.input.data(), c.weights.data(), c.bias.data(), c.mult.data(), c.shift.data(), out.data());
    const Diff d = diff_int8(out, c.want);
    ASSERT_LE(d.max_abs, 1) << "case " << i;
    exact += d.exact;
    total += d.total;
  }
  EXPECT_GT(mult_cases, 200);
  EXPECT_GT(static_cast<double>(exact) / total, 0.97);
}

TEST(DwConvS8, ChannelMultiplierOrder) {
  // One pixel, 1x1 kernel, 2 input channels, ch_mult 3: output channel ic*3+m = x[ic]*w[ic*3+m].
  DwConvParams p{1, 1, 2, 1, 1, 6, 3, 1, 1, 1, 1, 0, 0, 1, 1, 0, 0, -128, 127, 0.0f, 0.0f};
  const int8_t input[2] = {3, -5};
  const int8_t weights[6] = {1, 2, 3, 4, 5, 6};
  const int32_t mult[6] = {1 << 30, 1 << 30, 1 << 30, 1 << 30, 1 << 30, 1 << 30};
  const int32_t shift[6] = {1, 1, 1, 1, 1, 1};  // x 1.0
  int8_t out[6];
  dwconv_s8(p, input, weights, nullptr, mult, shift, out);
  const int8_t want[6] = {3, 6, 9, -20, -25, -30};
  for (int i = 0; i < 6; ++i) EXPECT_EQ(out[i], want[i]) << i;
}
