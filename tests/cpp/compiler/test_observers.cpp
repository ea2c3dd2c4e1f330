// Range observers (compiler/src/quantizer.cpp, calibrate in compile.cpp): the percentile and MSE
// choices on synthetic distributions checked against answers derived independently (exact
// order statistics, the calculus optimum of a uniform, a brute-force search with the real
// quantizer), and how calibrate applies them to a graph.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <iterator>
#include <random>

#include "../test_programs.h"
#include "mcuflow/compiler/passes.h"
#include "mcuflow/compiler/quantizer.h"

namespace mcuflow::compiler {
namespace {

using tp::Rng;

Histogram histogram_of(const std::vector<float>& values, int bins = kHistogramBins) {
  const auto [lo, hi] = std::minmax_element(values.begin(), values.end());
  Histogram h(*lo, *hi, bins);
  h.add(values.data(), values.size());
  return h;
}

// Standard normal values plus `outliers` values at +size and as many at -size.
std::vector<float> gaussian_with_outliers(size_t n, int outliers, float size, uint32_t seed) {
  Rng rng(seed);
  std::normal_distribution<double> normal;
  std::vector<float> v(n);
  for (float& x : v) x = float(normal(rng.engine()));
  for (int i = 0; i < outliers; ++i) v.push_back(size), v.push_back(-size);
  return v;
}

// Mean squared error of quantizing `values` with the int8 parameters quant_for_range picks.
double quantization_mse(const std::vector<float>& values, Range r) {
  const Quant q = quant_for_range(r.lo, r.hi);
  double sum = 0;
  for (float x : values) {
    const double level = std::clamp(std::round(double(x) / q.scale) + q.zero_point, -128.0, 127.0);
    const double back = (level - q.zero_point) * q.scale;
    sum += (back - x) * (back - x);
  }
  return sum / double(values.size());
}

TEST(Observers, HistogramCountsEveryValueAndSpansTheObservedRange) {
  const std::vector<float> v = {-1.0f, -0.5f, 0.0f, 0.25f, 3.0f};
  const Histogram h = histogram_of(v, 8);
  uint64_t total = 0;
  for (uint64_t c : h.counts()) total += c;
  EXPECT_EQ(total, v.size());
  EXPECT_EQ(h.counts().front(), 1u);  // the minimum
  EXPECT_EQ(h.counts().back(), 1u);   // the maximum lands in the last bin, not past it
  EXPECT_EQ(h.edge(0), -1.0f);
  EXPECT_EQ(h.edge(8), 3.0f);
  EXPECT_EQ(h.edge(4), 1.0f);
  EXPECT_THROW(Histogram(1.0f, 1.0f, 8), CompileError);
}

// Values that arrive in batches reaching ever further out, alternating sides (the worst order for a
// histogram that grows): every value is counted, the range holds them all with their span over at
// least about half the bins, and the observers answer as from a histogram built over the final range.
TEST(Observers, GrowingHistogramKeepsEveryValueAndItsResolution) {
  Rng rng(7);
  std::normal_distribution<double> normal;
  std::vector<float> all;
  Histogram grown(kHistogramBins);
  for (int batch = 0; batch < 12; ++batch) {
    std::vector<float> v(5000);
    for (float& x : v) x = float(normal(rng.engine()) * 0.1);
    v.push_back(batch % 2 ? -0.5f * float(batch) : 0.25f * float(batch + 1));  // the batch's reach
    v.push_back(std::numeric_limits<float>::quiet_NaN());                      // ignored
    grown.add(v.data(), v.size());
    all.insert(all.end(), v.begin(), v.end() - 1);
  }
  uint64_t total = 0;
  for (uint64_t c : grown.counts()) total += c;
  EXPECT_EQ(total, all.size());
  const auto [lo, hi] = std::minmax_element(all.begin(), all.end());
  EXPECT_EQ(grown.min(), *lo);
  EXPECT_EQ(grown.max(), *hi);
  EXPECT_LE(grown.lo(), *lo);
  EXPECT_GE(grown.hi(), *hi);
  EXPECT_GE(double(*hi) - *lo, 0.45 * (double(grown.hi()) - grown.lo()));
  const Histogram once = histogram_of(all);
  const double bin = (double(grown.hi()) - grown.lo()) / kHistogramBins;
  const Range pct = percentile_range(grown, 99.9), pct_once = percentile_range(once, 99.9);
  EXPECT_NEAR(pct.lo, pct_once.lo, 2 * bin);
  EXPECT_NEAR(pct.hi, pct_once.hi, 2 * bin);
  const Range mse = observer_range(grown, {Observer::kMse}), mse_once = mse_range(once);
  EXPECT_NEAR(mse.lo, mse_once.lo, 2 * bin);
  EXPECT_NEAR(mse.hi, mse_once.hi, 2 * bin);
  const Range minmax = observer_range(grown, {});
  EXPECT_EQ(minmax.lo, *lo);
  EXPECT_EQ(minmax.hi, *hi);
}

TEST(Observers, PercentileMatchesTheOrderStatisticsAndClipsOutliers) {
  const std::vector<float> v = gaussian_with_outliers(200000, 4, 40.0f, 1);
  const Histogram h = histogram_of(v);
  const double bin = (h.hi() - h.lo()) / kHistogramBins;
  std::vector<float> sorted = v;
  std::sort(sorted.begin(), sorted.end());
  for (double p : {99.0, 99.9, 99.99}) {
    const size_t beyond = size_t(double(v.size()) * (100 - p) / 100);
    const Range r = percentile_range(h, p);
    EXPECT_NEAR(r.lo, sorted[beyond], bin) << p;
    EXPECT_NEAR(r.hi, sorted[v.size() - 1 - beyond], bin) << p;
  }
  // 99.99%: 20 values beyond each side, so the 4 outliers at ±40 go; what is left is the normal
  // distribution's 99.99th percentile, 3.719 (its sampling spread here is a few hundredths).
  const Range r = percentile_range(h, 99.99);
  EXPECT_NEAR(r.hi, 3.719, 0.15);
  EXPECT_NEAR(r.lo, -3.719, 0.15);
  // A side that does not cross zero stays put: only the upper side of a ReLU output is clipped.
  std::vector<float> relu(v.size());
  std::transform(v.begin(), v.end(), relu.begin(), [](float x) { return std::max(x, 0.0f); });
  const Range relu_range = percentile_range(histogram_of(relu), 99.99);
  EXPECT_EQ(relu_range.lo, 0.0f);
  EXPECT_NEAR(relu_range.hi, 3.719, 0.15);
  // 100% is the observed range, exactly.
  const Range all = percentile_range(h, 100);
  EXPECT_EQ(all.lo, -40.0f);
  EXPECT_EQ(all.hi, 40.0f);
}

TEST(Observers, MseOfAUniformDistributionIsItsCalculusOptimum) {
  // Uniform on [0, 1], clipped at b: rounding error b (b/255)²/12 + clipping error (1 - b)³/3;
  // the derivative vanishes at 1 - b = b/510, b = 510/511.
  std::vector<float> v(200001);
  for (size_t i = 0; i < v.size(); ++i) v[i] = float(double(i) / double(v.size() - 1));
  const Range r = mse_range(histogram_of(v));
  EXPECT_EQ(r.lo, 0.0f);
  EXPECT_NEAR(r.hi, 510.0 / 511.0, 1.0 / kHistogramBins);
  EXPECT_LT(r.hi, 1.0f);
  // Mirrored to [-1, 0]: the same clip on the other side.
  for (float& x : v) x = -x;
  const Range mirrored = mse_range(histogram_of(v));
  EXPECT_EQ(mirrored.hi, 0.0f);
  EXPECT_NEAR(mirrored.lo, -510.0 / 511.0, 1.0 / kHistogramBins);
}

TEST(Observers, MseLiesBetweenPercentileAndMinMaxAndBeatsBoth) {
  // One outlier per side: clipping it at c costs (30 - c)² while the 100000 normal values pay
  // for the wider step, so the best clip is well inside ±30 and well outside the percentile's.
  const std::vector<float> v = gaussian_with_outliers(100000, 1, 30.0f, 2);
  const Histogram h = histogram_of(v);
  const Range mse = mse_range(h), pct = percentile_range(h, 99.99), minmax{h.lo(), h.hi()};
  EXPECT_GT(mse.hi, pct.hi + 1);
  EXPECT_LT(mse.hi, minmax.hi - 1);
  EXPECT_LT(mse.lo, pct.lo - 1);
  EXPECT_GT(mse.lo, minmax.lo + 1);
  const double mse_error = quantization_mse(v, mse);
  EXPECT_LT(mse_error, quantization_mse(v, pct));
  EXPECT_LT(mse_error, quantization_mse(v, minmax));
  // Brute force with the real quantizer over symmetric clips: MSE's choice is within 2% of it.
  double best = INFINITY;
  for (int i = 1; i <= 300; ++i) best = std::min(best, quantization_mse(v, Range{-0.1f * i, 0.1f * i}));
  EXPECT_LE(mse_error, best * 1.02);
}

TEST(Observers, MseOfTwoUniformBlocksClipsEachByItsCalculusOptimum) {
  // Density r = 1000 per unit on [-5, -4] and [6, 7] (N = 2000 values, range R = 12), clipped
  // by d at both ends: E(d) = (N - 2rd) (R - 2d)² / (12 · 255²) + 2 r d³ / 3. dE/dd = 0 gives
  // d² = (R - 2d)² / (12 · 255²) + 2 (N - 2rd) (R - 2d) / (12 · 255² r), solved by iteration.
  std::vector<float> v;
  for (int i = 0; i <= 1000; ++i) v.push_back(-5.0f + 0.001f * float(i)), v.push_back(6.0f + 0.001f * float(i));
  const Range r = mse_range(histogram_of(v));
  const double density = 1000, count = 2000, range = 12, steps2 = 12.0 * 255 * 255;
  double d = 0;
  for (int i = 0; i < 50; ++i) {
    const double inner = range - 2 * d;
    d = std::sqrt(inner * inner / steps2 + 2 * (count - 2 * density * d) * inner / (steps2 * density));
  }
  const double bin = range / kHistogramBins;
  EXPECT_NEAR(r.lo, -5 + d, bin);
  EXPECT_NEAR(r.hi, 7 - d, bin);
}

TEST(Observers, EntropyClipsFarOutliersAndKeepsAUniformRange) {
  // 100000 normal values and one outlier per side at ±30: the outliers' levels cost the normal
  // values resolution, so the least-divergence range lies well inside ±30 but outside most of them.
  const std::vector<float> v = gaussian_with_outliers(100000, 1, 30.0f, 2);
  const Histogram h = histogram_of(v);
  const Range r = entropy_range(h), minmax{h.lo(), h.hi()};
  EXPECT_LT(r.hi, 0.5 * minmax.hi);
  EXPECT_GT(r.lo, 0.5 * minmax.lo);
  EXPECT_GT(r.hi, 3.0f);   // past the normal values' 99.9th percentile (3.09) less a bin or two
  EXPECT_LT(r.lo, -3.0f);
  // KL weighs the distribution's shape, not error sizes: the bulk is resolved better than min/max
  // resolves it (the clipped outliers' squared error, which MSE would weigh, is not its concern).
  std::vector<float> bulk;
  std::copy_if(v.begin(), v.end(), std::back_inserter(bulk), [](float x) { return std::abs(x) < 10; });
  EXPECT_LT(quantization_mse(bulk, r), 0.1 * quantization_mse(bulk, minmax));
  EXPECT_EQ(observer_range(h, {Observer::kEntropy}).hi, r.hi);
  // A uniform distribution loses information wherever it is clipped (its edge bin gathers the
  // clipped values): the whole range is kept.
  std::vector<float> uniform(200001);
  for (size_t i = 0; i < uniform.size(); ++i) uniform[i] = float(double(i) / double(uniform.size() - 1));
  const Range u = entropy_range(histogram_of(uniform));
  EXPECT_EQ(u.lo, 0.0f);
  EXPECT_GE(u.hi, 1.0f - 2.0f / kHistogramBins);
}

TEST(Observers, OptionsAreCheckedAndNamed) {
  EXPECT_EQ(parse_observer("minmax"), Observer::kMinMax);
  EXPECT_EQ(parse_observer("percentile"), Observer::kPercentile);
  EXPECT_EQ(parse_observer("mse"), Observer::kMse);
  EXPECT_EQ(parse_observer("entropy"), Observer::kEntropy);
  for (Observer o : {Observer::kMinMax, Observer::kPercentile, Observer::kMse, Observer::kEntropy})
    EXPECT_EQ(parse_observer(observer_name(o)), o);
  try {
    parse_observer("kl");
    FAIL() << "expected a CompileError";
  } catch (const CompileError& e) {
    EXPECT_NE(std::string(e.what()).find("(minmax, percentile, mse, entropy)"), std::string::npos) << e.what();
  }
  for (double p : {50.0, 0.0, -1.0, 100.001, double(NAN)}) {
    EXPECT_THROW(check_observer_options(ObserverOptions{Observer::kPercentile, p}), CompileError) << p;
  }
  EXPECT_NO_THROW(check_observer_options(ObserverOptions{Observer::kPercentile, 100.0}));
  EXPECT_NO_THROW(check_observer_options(ObserverOptions{Observer::kPercentile, 50.5}));
  EXPECT_NO_THROW(check_observer_options(ObserverOptions{Observer::kMse, 0.0}));  // not a percentile observer
}

// tiny_graph calibrated on uniform inputs with one huge value per sample in the same place.
struct Calibrated {
  Graph g;
  std::string report;
};
Calibrated calibrate_with_outliers(const ObserverOptions& observer) {
  Calibrated c{tp::tiny_graph(), ""};
  run_graph_passes(c.g);
  Calibration calib = tp::random_calibration(c.g, 400, 5);
  for (size_t s = 0; s < calib.size(); s += 200) calib[s][0][3] = 50.0f;
  c.report = calibrate(c.g, calib, observer);
  return c;
}

TEST(Observers, CalibrateNarrowsRangesAndReportsThem) {
  const Calibrated minmax = calibrate_with_outliers({});
  EXPECT_EQ(minmax.report, "{\"observer\":\"minmax\"}");
  const Tensor& x_minmax = minmax.g.tensors[size_t(minmax.g.inputs[0])];
  EXPECT_EQ(x_minmax.observed_max, 50.0f);

  // 2 outliers in 3200 input values: 99.9% clips 3.2 values per side, so both; 100% none.
  const Calibrated pct = calibrate_with_outliers({Observer::kPercentile, 99.9});
  const Tensor& x_pct = pct.g.tensors[size_t(pct.g.inputs[0])];
  // Inside the bin holding 1: the first sample's range [-1, 50] grew at most once, to 102 wide.
  EXPECT_LT(x_pct.observed_max, 1.0f + 102.0f / kHistogramBins);
  EXPECT_GE(x_pct.observed_min, x_minmax.observed_min);
  EXPECT_NE(pct.report.find("\"observer\":\"percentile\",\"percentile\":99.9,"), std::string::npos) << pct.report;
  EXPECT_NE(pct.report.find("{\"tensor\":\"" + x_pct.name + "\",\"observed\":[" ), std::string::npos) << pct.report;
  for (size_t t = 0; t < pct.g.tensors.size(); ++t) {
    const Tensor &a = pct.g.tensors[t], &b = minmax.g.tensors[t];
    if (a.constant) continue;
    EXPECT_GE(a.observed_min, b.observed_min) << a.name;  // never wider than observed
    EXPECT_LE(a.observed_max, b.observed_max) << a.name;
    EXPECT_LE(a.observed_min, a.observed_max) << a.name;
  }

  const Calibrated all = calibrate_with_outliers({Observer::kPercentile, 100.0});
  EXPECT_NE(all.report.find("\"narrowed\":[]"), std::string::npos) << all.report;
  for (size_t t = 0; t < all.g.tensors.size(); ++t) {
    EXPECT_EQ(all.g.tensors[t].observed_min, minmax.g.tensors[t].observed_min) << t;
    EXPECT_EQ(all.g.tensors[t].observed_max, minmax.g.tensors[t].observed_max) << t;
  }
  EXPECT_THROW(calibrate_with_outliers({Observer::kPercentile, 40.0}), CompileError);
}

TEST(Observers, ConstantTensorsKeepTheDegenerateRange) {
  // All-zero calibration: every activation stays exactly [0, 0] (no histogram to build), and
  // quantization falls back to the unit range.
  Graph g = tp::conv_relu_pool_linear_graph();
  run_graph_passes(g);
  Calibration calib = tp::random_calibration(g, 3, 1, 0.0, 0.0);
  calibrate(g, calib, ObserverOptions{Observer::kMse});
  const Tensor& x = g.tensors[size_t(g.inputs[0])];
  EXPECT_EQ(x.observed_min, 0.0f);
  EXPECT_EQ(x.observed_max, 0.0f);
  EXPECT_NO_THROW(assign_quantization(g));
  EXPECT_FLOAT_EQ(g.tensors[size_t(g.inputs[0])].quant.scale, 1.0f / 255.0f);
}

// Every sample run is reported once, in order: one pass whatever the observer (the histograms grow).
TEST(Observers, CalibrationReportsEverySampleRun) {
  for (const Observer observer : {Observer::kMinMax, Observer::kPercentile, Observer::kMse}) {
    Graph g = tp::conv_relu_pool_linear_graph();
    run_graph_passes(g);
    const Calibration calib = tp::random_calibration(g, 7, 3);
    std::vector<std::pair<size_t, size_t>> calls;
    calibrate(g, calib, ObserverOptions{observer}, [&](size_t done, size_t total) { calls.emplace_back(done, total); });
    ASSERT_EQ(calls.size(), calib.size()) << observer_name(observer);
    for (size_t i = 0; i < calls.size(); ++i) EXPECT_EQ(calls[i], std::pair(i + 1, calls.size()));
  }
}

TEST(Observers, CompiledProgramRecordsTheObserver) {
  const Graph g = tp::conv_relu_pool_linear_graph();
  CompileOptions o;
  o.target = tp::kReferenceTarget;
  o.observer = ObserverOptions{Observer::kMse};
  const std::vector<uint8_t> bytes = compile_graph(g, o, tp::random_calibration(g, 4, 2));
  const std::string file(bytes.begin(), bytes.end());
  EXPECT_NE(file.find("\"quantization\":{\"observer\":\"mse\",\"bins\":2048,\"narrowed\":["), std::string::npos);
  EXPECT_EQ(tp::load_error(bytes), Error::kOk);
}

}  // namespace
}  // namespace mcuflow::compiler
