// Quantization math and the quantizer (compiler/src/quant_math.cpp, quantizer.cpp): properties
// of quantize_multiplier and quant_for_range over random sweeps, and how assign_quantization
// hands out activation parameters.
#include <gtest/gtest.h>

#include <cmath>

#include "../test_programs.h"
#include "mcuflow/compiler/passes.h"
#include "mcuflow/compiler/quant_math.h"
#include "mcuflow/compiler/quantizer.h"

namespace mcuflow::compiler {
namespace {

using tp::Builder;
using tp::Rng;

double log_uniform(Rng& rng, double lo, double hi) { return std::exp(rng.uniform(std::log(lo), std::log(hi))); }

// The real value a quantized multiplier stands for: multiplier * 2^(shift - 31).
double real_of(QuantizedMultiplier q) { return std::ldexp(double(q.multiplier), q.shift - 31); }

TEST(QuantizeMultiplier, RandomSweepIsNormalisedAndCorrectlyRounded) {
  Rng rng(1);
  for (int i = 0; i < 200000; ++i) {
    const double real = log_uniform(rng, 1e-9, 1e6);
    const QuantizedMultiplier q = quantize_multiplier(real);
    ASSERT_GE(q.multiplier, int32_t(1) << 30) << real;
    ASSERT_LT(int64_t(q.multiplier), int64_t(1) << 31) << real;
    // real * 2^(31 - shift) is exact in double; the multiplier is it rounded to nearest (half an
    // integer step at most), except when rounding reached 2^31 and was renormalised to 2^30.
    const double scaled = std::ldexp(real, 31 - q.shift);
    ASSERT_LE(std::fabs(scaled - q.multiplier), 0.5) << real;
    ASSERT_LE(std::fabs(real_of(q) - real), std::ldexp(1.0, q.shift - 32)) << real;
    ASSERT_LE(q.shift, 30) << "shifts above 30 are rejected by the runtime";
    ASSERT_GE(q.shift, -31) << real;
  }
}

TEST(QuantizeMultiplier, EdgeValues) {
  EXPECT_EQ(quantize_multiplier(0.0).multiplier, 0);
  EXPECT_EQ(quantize_multiplier(0.0).shift, 0);
  for (int k = -31; k <= 29; ++k) {  // exact powers of two: 2^30 with shift k + 1
    const QuantizedMultiplier q = quantize_multiplier(std::ldexp(1.0, k));
    EXPECT_EQ(q.multiplier, 1 << 30) << k;
    EXPECT_EQ(q.shift, k + 1) << k;
  }
  // Just below a power of two rounds up to 2^31 and is renormalised.
  const QuantizedMultiplier below = quantize_multiplier(std::nextafter(1.0, 0.0));
  EXPECT_EQ(below.multiplier, 1 << 30);
  EXPECT_EQ(below.shift, 1);
  EXPECT_EQ(real_of(below), 1.0);
  // Just above rounds down to the same value.
  const QuantizedMultiplier above = quantize_multiplier(std::nextafter(1.0, 2.0));
  EXPECT_EQ(above.multiplier, 1 << 30);
  EXPECT_EQ(above.shift, 1);
  // Below what a 31-bit right shift expresses: flushed to zero.
  EXPECT_EQ(quantize_multiplier(std::ldexp(1.0, -33)).multiplier, 0);
  EXPECT_EQ(quantize_multiplier(1e-12).multiplier, 0);
  EXPECT_EQ(quantize_multiplier(1e-12).shift, 0);
  // The smallest kept value: 2^-32 = 0.5 * 2^-31.
  EXPECT_EQ(quantize_multiplier(std::ldexp(1.0, -32)).shift, -31);
  // Ties round away from zero: fraction 0.5 + 2^-32 -> 2^30 + 0.5 -> 2^30 + 1.
  EXPECT_EQ(quantize_multiplier(0.5 + std::ldexp(1.0, -32)).multiplier, (1 << 30) + 1);
}

TEST(QuantForRange, RandomSweepCoversTheRangeAndZero) {
  Rng rng(2);
  for (int i = 0; i < 100000; ++i) {
    float lo = float(rng.uniform(-1, 1) * log_uniform(rng, 1e-4, 1e4));
    float hi = float(rng.uniform(-1, 1) * log_uniform(rng, 1e-4, 1e4));
    if (lo > hi) std::swap(lo, hi);
    const Quant q = quant_for_range(lo, hi);
    ASSERT_TRUE(q.valid);
    ASSERT_GE(q.zero_point, -128);
    ASSERT_LE(q.zero_point, 127);
    const double l = std::min(lo, 0.0f), h = std::max(hi, 0.0f);
    ASSERT_GT(q.scale, 0.0f);
    // The range spread over the 255 steps (ranges that (almost) never moved may get more).
    if (h - l >= 1e-5) ASSERT_NEAR(q.scale, (h - l) / 255.0, 1e-6 * (h - l) / 255.0) << lo << " " << hi;
    if (h - l < 1e-5) continue;
    // Zero is exactly the integer zero_point; the extremes of the range land on -128 and 127
    // within rounding of the zero point (half a step) plus float error.
    const double s = q.scale;
    ASSERT_NEAR((-128 - q.zero_point) * s, l, 0.5 * s + 1e-5 * (h - l)) << lo << " " << hi;
    ASSERT_NEAR((127 - q.zero_point) * s, h, 0.5 * s + 1e-5 * (h - l)) << lo << " " << hi;
    // Every real in the range is within half a step of [-128, 127] before rounding, so clamping
    // costs at most the rounding error.
    for (double r : {l, h, 0.5 * (l + h), 0.0}) {
      const double qv = r / s + q.zero_point;
      ASSERT_GE(qv, -128.5 - 1e-3) << r << " in [" << lo << ", " << hi << "]";
      ASSERT_LE(qv, 127.5 + 1e-3) << r << " in [" << lo << ", " << hi << "]";
    }
  }
}

TEST(QuantForRange, OneSidedAndDegenerateRanges) {
  const Quant pos = quant_for_range(0.5f, 2.0f);  // the range is widened to [0, 2]
  EXPECT_EQ(pos.zero_point, -128);
  EXPECT_FLOAT_EQ(pos.scale, 2.0f / 255.0f);
  const Quant neg = quant_for_range(-3.0f, -1.0f);  // [-3, 0]
  EXPECT_EQ(neg.zero_point, 127);
  EXPECT_FLOAT_EQ(neg.scale, 3.0f / 255.0f);
  const Quant zero = quant_for_range(0.0f, 0.0f);
  EXPECT_TRUE(zero.valid);
  EXPECT_GT(zero.scale, 0.0f);
  EXPECT_EQ(zero.zero_point, -128);
  const Quant relu6 = quant_for_range(0.0f, 6.0f);
  EXPECT_EQ(relu6.zero_point, -128);
  EXPECT_FLOAT_EQ(relu6.scale, 6.0f / 255.0f);
}

TEST(Quantizer, ObserveRangeWidens) {
  Tensor t;
  const float a[] = {0.5f, -0.25f, 2.0f};
  observe_range(t, a, 3);
  EXPECT_EQ(t.observed_min, -0.25f);
  EXPECT_EQ(t.observed_max, 2.0f);
  const float b[] = {1.0f};
  observe_range(t, b, 1);
  EXPECT_EQ(t.observed_min, -0.25f);
  EXPECT_EQ(t.observed_max, 2.0f);
  const float c[] = {-7.0f, 9.0f};
  observe_range(t, c, 2);
  EXPECT_EQ(t.observed_min, -7.0f);
  EXPECT_EQ(t.observed_max, 9.0f);
}

TEST(Quantizer, AssignQuantization) {
  Rng rng(3);
  Builder b;
  const int x = b.input("x", {1, 2, 4, 4});
  const int conv = b.conv(x, b.random_constant("w", {3, 2, 1, 1}, rng), -1);
  const int pool = b.max_pool(conv, 2, 2);
  const int relu = b.relu(pool);
  const int flat = b.reshape(relu, {1, -1});
  const int lin = b.linear(flat, b.random_constant("fw", {4, 12}, rng), -1);
  const int sm = b.softmax(lin);
  b.outputs({sm});
  Graph g = b.g;
  auto observe = [&](int t, float lo, float hi) {
    g.tensors[size_t(t)].observed_min = lo;
    g.tensors[size_t(t)].observed_max = hi;
  };
  observe(x, -1, 1);
  observe(conv, -3, 5);
  observe(pool, -2, 4);  // ignored: pooling keeps its input's quantization
  observe(lin, -8, 8);
  assign_quantization(g);
  const auto q = [&](int t) { return g.tensors[size_t(t)].quant; };
  const Quant qx = quant_for_range(-1, 1), qc = quant_for_range(-3, 5), ql = quant_for_range(-8, 8);
  EXPECT_TRUE(q(x).valid);
  EXPECT_EQ(q(x).scale, qx.scale);
  EXPECT_EQ(q(x).zero_point, qx.zero_point);
  EXPECT_EQ(q(conv).scale, qc.scale);
  EXPECT_EQ(q(conv).zero_point, qc.zero_point);
  for (int t : {pool, relu, flat}) {
    EXPECT_EQ(q(t).scale, qc.scale) << t;
    EXPECT_EQ(q(t).zero_point, qc.zero_point) << t;
  }
  EXPECT_EQ(q(lin).scale, ql.scale);
  EXPECT_EQ(q(sm).scale, 1.0f / 256.0f);
  EXPECT_EQ(q(sm).zero_point, -128);
  // A tensor calibration never reached is an error naming it.
  Graph h = b.g;
  h.tensors[size_t(x)].observed_min = -1;
  h.tensors[size_t(x)].observed_max = 1;
  try {
    assign_quantization(h);
    FAIL() << "expected a CompileError";
  } catch (const CompileError& e) {
    EXPECT_NE(std::string(e.what()).find(h.tensors[size_t(conv)].name), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("never observed"), std::string::npos) << e.what();
  }
}

// Weights, biases and constant operands get their specs from the quantizer, computed here
// from the values directly: conv weights symmetric per output channel, linear weights per
// tensor, biases int32 at input scale x weight scale.
TEST(Quantizer, AssignsConstantSpecs) {
  Rng rng(5);
  Builder b;
  const int x = b.input("x", {1, 2, 3, 3});
  const int w = b.random_constant("w", {3, 2, 1, 1}, rng);
  const int cb = b.random_constant("cb", {3}, rng);
  const int conv = b.conv(x, w, cb);
  const int flat = b.reshape(conv, {1, -1});
  const int fw = b.random_constant("fw", {4, 27}, rng), fb = b.random_constant("fb", {4}, rng);
  const int lin = b.linear(flat, fw, fb);
  const int offset = b.random_constant("offset", {4}, rng, -2.0, 3.0);
  const int sum = b.op("add", {lin, offset});
  b.outputs({sum});
  Graph g = b.g;
  for (int t : {x, conv, lin, sum}) g.tensors[size_t(t)].observed_min = -1, g.tensors[size_t(t)].observed_max = 2;
  assign_quantization(g);
  const auto q = [&](int t) -> const Quant& { return g.tensors[size_t(t)].quant; };

  ASSERT_TRUE(q(w).valid);
  EXPECT_TRUE(q(w).symmetric);
  EXPECT_EQ(q(w).bits, 8);
  EXPECT_EQ(q(w).axis, 0);
  ASSERT_EQ(q(w).scales.size(), 3u);
  const std::vector<float>& wd = g.tensors[size_t(w)].data;
  for (size_t c = 0; c < 3; ++c) {
    const float max_abs = std::max(std::fabs(wd[2 * c]), std::fabs(wd[2 * c + 1]));
    EXPECT_EQ(q(w).scales[c], double(max_abs / 127.0f)) << c;
    EXPECT_EQ(q(w).zero_points[c], 0);
    EXPECT_EQ(q(cb).scales[c], double(q(x).scale) * q(w).scales[c]) << "bias at input x weight scale";
  }
  EXPECT_EQ(q(cb).bits, 32);
  EXPECT_EQ(q(cb).axis, 0);

  EXPECT_EQ(q(fw).axis, -1) << "linear weights are per tensor";
  float fmax = 0;
  for (float v : g.tensors[size_t(fw)].data) fmax = std::max(fmax, std::fabs(v));
  EXPECT_EQ(q(fw).scale, fmax / 127.0f);
  ASSERT_EQ(q(fb).scales.size(), 4u);
  for (double s : q(fb).scales) EXPECT_EQ(s, double(q(conv).scale) * double(q(fw).scale));

  float lo = 0, hi = 0;
  for (float v : g.tensors[size_t(offset)].data) lo = std::min(lo, v), hi = std::max(hi, v);
  const Quant expected = quant_for_range(lo, hi);
  EXPECT_EQ(q(offset), expected) << "an element-wise constant operand: asymmetric, by its range";

  // Quantized values follow the spec: round half away from zero, clamped to +-127 (symmetric).
  const std::vector<int64_t> wq = quantize_values(wd, q(w), g.tensors[size_t(w)].shape);
  for (size_t i = 0; i < wd.size(); ++i) {
    EXPECT_EQ(wq[i], int32_t(std::lround(wd[i] / float(q(w).scales[i / 2])))) << i;
    EXPECT_LE(std::abs(wq[i]), 127);
  }
}

// A spec the front end gives is kept as it is; the rest is assigned around it. Two ops sharing
// a bias that needs two specs read two copies of it.
TEST(Quantizer, KeepsGivenSpecsAndSplitsSharedConstants) {
  Rng rng(6);
  Builder b;
  const int x1 = b.input("x1", {1, 8}), x2 = b.input("x2", {1, 8});
  const int w = b.random_constant("w", {4, 8}, rng), bias = b.random_constant("bias", {4}, rng);
  const int y1 = b.linear(x1, w, bias), y2 = b.linear(x2, w, bias);
  b.outputs({y1, y2});
  Graph g = b.g;
  g.tensors[size_t(x1)].observed_min = -1, g.tensors[size_t(x1)].observed_max = 1;
  g.tensors[size_t(x2)].observed_min = -4, g.tensors[size_t(x2)].observed_max = 4;
  Quant given_w;
  given_w.valid = given_w.symmetric = given_w.given = true;
  given_w.axis = 0;
  given_w.scales = {0.01, 0.02, 0.03, 0.04};
  given_w.zero_points = {0, 0, 0, 0};
  g.tensors[size_t(w)].quant = given_w;
  Quant given_y = quant_for_range(-3.0f, 1.5f);
  given_y.given = true;
  g.tensors[size_t(y1)].quant = given_y;  // never observed: given, not calibrated
  g.tensors[size_t(y2)].observed_min = -1, g.tensors[size_t(y2)].observed_max = 1;
  assign_quantization(g);
  EXPECT_EQ(g.tensors[size_t(w)].quant, given_w);
  EXPECT_EQ(g.tensors[size_t(y1)].quant, given_y);
  const Op &first = g.ops[0], &second = g.ops[1];
  EXPECT_EQ(first.inputs[2], bias);
  ASSERT_NE(second.inputs[2], bias) << "the second linear reads its own copy of the bias";
  const Tensor& copy = g.tensors[size_t(second.inputs[2])];
  EXPECT_EQ(copy.data, g.tensors[size_t(bias)].data);
  for (size_t c = 0; c < 4; ++c) {
    EXPECT_EQ(g.tensors[size_t(bias)].quant.scales[c], double(g.tensors[size_t(x1)].quant.scale) * given_w.scales[c]);
    EXPECT_EQ(copy.quant.scales[c], double(g.tensors[size_t(x2)].quant.scale) * given_w.scales[c]);
  }
}

TEST(Quantizer, CalibrateObservesEveryActivation) {
  Graph g = tp::conv_relu_pool_linear_graph();
  run_graph_passes(g);  // calibrate() lowers the graph as it is: layouts must be assigned
  const Calibration calib = tp::random_calibration(g, 5, 4);
  calibrate(g, calib);
  // The input's observed range is exactly the calibration data's.
  float lo = INFINITY, hi = -INFINITY;
  for (const auto& sample : calib) {
    for (float v : sample[0]) lo = std::min(lo, v), hi = std::max(hi, v);
  }
  EXPECT_EQ(g.tensors[size_t(g.inputs[0])].observed_min, lo);
  EXPECT_EQ(g.tensors[size_t(g.inputs[0])].observed_max, hi);
  // Every activation that an op writes was observed, and agrees with the reference interpreter.
  double ref_lo = INFINITY, ref_hi = -INFINITY;
  for (const auto& sample : calib) {
    const tp::Values v = tp::reference_eval(g, sample);
    for (double e : v[size_t(g.outputs[0])]) ref_lo = std::min(ref_lo, e), ref_hi = std::max(ref_hi, e);
  }
  for (const Op& op : g.ops) {
    const Tensor& t = g.tensors[size_t(op.outputs[0])];
    EXPECT_LE(t.observed_min, t.observed_max) << t.name;
  }
  const Tensor& out = g.tensors[size_t(g.outputs[0])];
  EXPECT_NEAR(out.observed_min, ref_lo, 1e-4);
  EXPECT_NEAR(out.observed_max, ref_hi, 1e-4);
  // Mismatched calibration data is rejected with a message.
  Graph h = tp::conv_relu_pool_linear_graph();
  run_graph_passes(h);
  EXPECT_THROW(calibrate(h, {}), CompileError);
  EXPECT_THROW(calibrate(h, {{std::vector<float>(10, 0.0f)}}), CompileError);
  EXPECT_THROW(calibrate(h, {{std::vector<float>(192, NAN)}}), CompileError);
}

}  // namespace
}  // namespace mcuflow::compiler
