// transpose_conv_s8 / transpose_conv_f32 against a scatter formulation in double: every input
// pixel adds x * w to output (iy * stride - pad + ky * dil, ix * stride - pad + kx * dil).
#include <gtest/gtest.h>

#include "mcuflow/kernels/kernels.h"
#include "test_util.h"

using namespace mcuflow::kernels;
using namespace mcuflow::test;

TEST(TransposeConv, Int8AndFloatAgainstDoubleScatter) {
  Rng rng(9601);
  for (int it = 0; it < 200; ++it) {
    ConvParams p{};
    p.in_h = rng.uniform_int(1, 5); p.in_w = rng.uniform_int(1, 5);
    p.in_c = rng.uniform_int(1, 5); p.out_c = rng.uniform_int(1, 5);
    p.k_h = rng.uniform_int(1, 4); p.k_w = rng.uniform_int(1, 4);
    p.stride_h = rng.uniform_int(1, 3); p.stride_w = rng.uniform_int(1, 3);
    p.dil_h = rng.uniform_int(1, 2); p.dil_w = rng.uniform_int(1, 2);
    p.pad_top = rng.uniform_int(0, (p.k_h - 1) * p.dil_h); p.pad_left = rng.uniform_int(0, (p.k_w - 1) * p.dil_w);
    const int32_t extra_h = rng.uniform_int(0, p.stride_h - 1), extra_w = rng.uniform_int(0, p.stride_w - 1);
    p.out_h = (p.in_h - 1) * p.stride_h - 2 * p.pad_top + p.dil_h * (p.k_h - 1) + extra_h + 1;
    p.out_w = (p.in_w - 1) * p.stride_w - 2 * p.pad_left + p.dil_w * (p.k_w - 1) + extra_w + 1;
    if (p.out_h < 1 || p.out_w < 1) continue;
    const Quant qin = random_act_quant(rng);
    const auto x = rng.int8s(size_t(p.in_h) * p.in_w * p.in_c);
    const auto w = rng.int8s(size_t(p.out_c) * p.k_h * p.k_w * p.in_c, -127, 127);
    std::vector<double> w_scale(size_t(p.out_c));
    for (auto& s : w_scale) s = rng.log_uniform(0.001, 0.05);
    std::vector<int32_t> bias(size_t(p.out_c));
    for (auto& b : bias) b = rng.uniform_int(-2000, 2000);
    std::vector<double> ref(size_t(p.out_h) * p.out_w * p.out_c, 0.0);
    for (int32_t oc = 0; oc < p.out_c; ++oc)
      for (size_t i = 0; i < size_t(p.out_h) * p.out_w; ++i) ref[i * p.out_c + oc] = bias[oc] * qin.scale * w_scale[oc];
    for (int32_t iy = 0; iy < p.in_h; ++iy)
      for (int32_t ix = 0; ix < p.in_w; ++ix)
        for (int32_t ky = 0; ky < p.k_h; ++ky)
          for (int32_t kx = 0; kx < p.k_w; ++kx) {
            const int32_t oy = iy * p.stride_h - p.pad_top + ky * p.dil_h, ox = ix * p.stride_w - p.pad_left + kx * p.dil_w;
            if (oy < 0 || oy >= p.out_h || ox < 0 || ox >= p.out_w) continue;
            for (int32_t oc = 0; oc < p.out_c; ++oc)
              for (int32_t ic = 0; ic < p.in_c; ++ic)
                ref[(size_t(oy) * p.out_w + ox) * p.out_c + oc] +=
                    (x[(size_t(iy) * p.in_w + ix) * p.in_c + ic] - qin.zp) * qin.scale *
                    w[((size_t(oc) * p.k_h + ky) * p.k_w + kx) * p.in_c + ic] * w_scale[oc];
          }
    const Quant out = fit_output_quant(ref, rng);
    const ActRange act = random_act(rng, out);
    std::vector<double> real(w_scale.size());
    for (size_t c = 0; c < real.size(); ++c) real[c] = qin.scale * w_scale[c] / out.scale;
    std::vector<int32_t> mult, shift;
    multipliers_for(real, mult, shift);
    p.input_offset = -qin.zp;
    p.out.output_offset = out.zp;
    p.out.act_min = act.lo;
    p.out.act_max = act.hi;
    p.act_min_f = -3.4e38f;
    p.act_max_f = 3.4e38f;
    std::vector<int8_t> got(ref.size());
    transpose_conv_s8(p, x.data(), w.data(), bias.data(), mult.data(), shift.data(), got.data());
    std::vector<float> xf, wf, bf;
    for (int8_t v : x) xf.push_back(float((v - qin.zp) * qin.scale));
    for (size_t i = 0; i < w.size(); ++i) wf.push_back(float(w[i] * w_scale[i / (w.size() / size_t(p.out_c))]));
    for (int32_t oc = 0; oc < p.out_c; ++oc) bf.push_back(float(bias[oc] * qin.scale * w_scale[oc]));
    std::vector<float> got_f(ref.size());
    transpose_conv_f32(p, xf.data(), wf.data(), bf.data(), got_f.data());
    for (size_t i = 0; i < ref.size(); ++i) {
      ASSERT_LE(std::abs(got[i] - quantize_ref(ref[i], out.scale, out.zp, act.lo, act.hi)), 1) << "case " << it;
      ASSERT_NEAR(got_f[i], ref[i], 1e-4 * (std::fabs(ref[i]) + 1.0)) << "case " << it;
    }
  }
}
