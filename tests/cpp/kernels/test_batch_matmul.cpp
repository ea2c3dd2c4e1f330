// batch_matmul_s8 / batch_matmul_f32 (both operand layouts) against double arithmetic on the
// dequantized operands.
#include <gtest/gtest.h>

#include "mcuflow/compiler/quant_math.h"
#include "mcuflow/kernels/kernels.h"
#include "test_util.h"

using namespace mcuflow::kernels;
using namespace mcuflow::test;

TEST(BatchMatmul, Int8AndFloatAgainstDouble) {
  Rng rng(9701);
  for (int it = 0; it < 200; ++it) {
    BatchMatmulParams p{};
    p.batch = rng.uniform_int(1, 3); p.m = rng.uniform_int(1, 6); p.k = rng.uniform_int(1, 40); p.n = rng.uniform_int(1, 6);
    p.rhs_transposed = it % 2;
    const Quant qa = random_act_quant(rng), qb = random_act_quant(rng);
    const auto a = rng.int8s(size_t(p.batch * p.m * p.k)), b = rng.int8s(size_t(p.batch * p.k * p.n));
    std::vector<float> af, bf;
    for (int8_t v : a) af.push_back(float((v - qa.zp) * qa.scale));
    for (int8_t v : b) bf.push_back(float((v - qb.zp) * qb.scale));
    std::vector<double> ref, magnitude;
    for (int32_t bi = 0; bi < p.batch; ++bi)
      for (int32_t m = 0; m < p.m; ++m)
        for (int32_t n = 0; n < p.n; ++n) {
          double s = 0.0, mag = 0.0;
          for (int32_t k = 0; k < p.k; ++k) {
            const size_t rhs = p.rhs_transposed ? size_t((bi * p.n + n) * p.k + k) : size_t((bi * p.k + k) * p.n + n);
            const double t = double(af[size_t((bi * p.m + m) * p.k + k)]) * bf[rhs];
            s += t;
            mag += std::fabs(t);
          }
          ref.push_back(s);
          magnitude.push_back(mag);
        }
    const Quant out = fit_output_quant(ref, rng);
    const ActRange act = random_act(rng, out);
    const auto mq = mcuflow::compiler::mul_rescale(qa.scale, qb.scale, out.scale);
    p.lhs_offset = -qa.zp; p.rhs_offset = -qb.zp; p.output_offset = out.zp;
    p.multiplier = mq.multiplier; p.shift = mq.shift;
    p.act_min = act.lo; p.act_max = act.hi;
    p.act_min_f = -3.4e38f; p.act_max_f = 3.4e38f;
    std::vector<int8_t> got(ref.size());
    std::vector<float> got_f(ref.size());
    batch_matmul_s8(p, a.data(), b.data(), got.data());
    batch_matmul_f32(p, af.data(), bf.data(), got_f.data());
    for (size_t i = 0; i < ref.size(); ++i) {
      ASSERT_LE(std::abs(got[i] - quantize_ref(ref[i], out.scale, out.zp, act.lo, act.hi)), 1) << "case " << it;
      ASSERT_NEAR(got_f[i], ref[i], 1e-5 * magnitude[i] + 1e-7) << "case " << it;
    }
  }
}
