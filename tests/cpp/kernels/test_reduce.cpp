// reduce_s8 / reduce_f32 (sum, mean, max over the middle axis) and argmax_s8 / argmax_f32
// against double arithmetic on the dequantized inputs.
#include <gtest/gtest.h>

#include <algorithm>

#include "mcuflow/compiler/quant_math.h"
#include "mcuflow/kernels/kernels.h"
#include "test_util.h"

using namespace mcuflow::kernels;
using namespace mcuflow::test;

TEST(Reduce, SumMeanMaxAgainstDouble) {
  Rng rng(9501);
  for (int it = 0; it < 300; ++it) {
    const int32_t op = it % 3, outer = rng.uniform_int(1, 5), reduce = rng.uniform_int(1, 40), inner = rng.uniform_int(1, 6);
    const Quant qin = random_act_quant(rng);
    const auto x = rng.int8s(size_t(outer * reduce * inner));
    std::vector<float> xf;
    for (int8_t v : x) xf.push_back(float((v - qin.zp) * qin.scale));
    std::vector<double> ref;
    for (int32_t o = 0; o < outer; ++o)
      for (int32_t i = 0; i < inner; ++i) {
        double acc = op == kReduceMax ? -1e300 : 0.0;
        for (int32_t r = 0; r < reduce; ++r) {
          const double v = xf[size_t((o * reduce + r) * inner + i)];
          acc = op == kReduceMax ? std::max(acc, v) : acc + v;
        }
        ref.push_back(op == kReduceMean ? acc / reduce : acc);
      }
    const Quant out = op == kReduceSum ? fit_output_quant(ref, rng) : qin;
    const double count = op == kReduceMean ? reduce : 1.0;
    const auto m = mcuflow::compiler::quantize_multiplier(qin.scale / (count * out.scale));
    const ReduceParams p{outer, reduce, inner, op, -qin.zp, out.zp, m.multiplier, m.shift, -128, 127};
    std::vector<int8_t> got(ref.size());
    std::vector<float> got_f(ref.size());
    reduce_s8(p, x.data(), got.data());
    reduce_f32(p, xf.data(), got_f.data());
    for (size_t i = 0; i < ref.size(); ++i) {
      ASSERT_LE(std::abs(got[i] - quantize_ref(ref[i], out.scale, out.zp)), 1) << "case " << it << " op " << op;
      ASSERT_NEAR(got_f[i], ref[i], 1e-5 * (std::fabs(ref[i]) + reduce * qin.scale * 128)) << "case " << it;
    }
  }
}

TEST(Argmax, FirstMaximumAlongTheAxis) {
  Rng rng(9502);
  for (int it = 0; it < 200; ++it) {
    const int32_t outer = rng.uniform_int(1, 4), reduce = rng.uniform_int(1, 20), inner = rng.uniform_int(1, 5);
    const auto x = rng.int8s(size_t(outer * reduce * inner), -4, 4);  // many ties
    std::vector<float> xf(x.begin(), x.end());
    std::vector<int32_t> got(size_t(outer * inner)), got_f(got.size());
    argmax_s8(ArgmaxParams{outer, reduce, inner}, x.data(), got.data());
    argmax_f32(ArgmaxParams{outer, reduce, inner}, xf.data(), got_f.data());
    for (int32_t o = 0; o < outer; ++o)
      for (int32_t i = 0; i < inner; ++i) {
        int32_t best = 0;
        for (int32_t r = 0; r < reduce; ++r) {
          if (x[size_t((o * reduce + r) * inner + i)] > x[size_t((o * reduce + best) * inner + i)]) best = r;
        }
        ASSERT_EQ(got[size_t(o * inner + i)], best) << "case " << it;
        ASSERT_EQ(got_f[size_t(o * inner + i)], best) << "case " << it;
      }
  }
}
