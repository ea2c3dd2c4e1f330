#include "mcuflow/compiler/quantizer.h"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <limits>
#include <sstream>

#include "mcuflow/compiler/op_registry.h"

namespace mcuflow::compiler {

void observe_range(Tensor& t, const float* values, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    t.observed_min = std::min(t.observed_min, values[i]);
    t.observed_max = std::max(t.observed_max, values[i]);
  }
}

Quant quant_for_range(float lo, float hi) {
  lo = std::min(lo, 0.0f);
  hi = std::max(hi, 0.0f);
  Quant q;
  q.valid = true;
  // A range that never moved (a tensor that is always 0) gets a unit range: any scale
  // represents it exactly, and a tiny one would blow up the next layer's int32 bias.
  q.scale = hi - lo < 1e-6f ? 1.0f / 255.0f : (hi - lo) / 255.0f;
  q.zero_point = int32_t(std::clamp(std::round(-128.0f - lo / q.scale), -128.0f, 127.0f));
  return q;
}

namespace {

// A pad keeps its input's quantization when the pad value lies inside the input's range
// (zero always does); otherwise the output needs a range covering the value too.
bool value_fits(const Op& op, const Quant& in) {
  const double value = op.float_attr("value");
  return value >= double(in.scale) * (-128 - in.zero_point) && value <= double(in.scale) * (127 - in.zero_point);
}

Quant observed_quant(const Tensor& t) {
  if (!(t.observed_min <= t.observed_max))
    throw CompileError("tensor " + t.name + " was never observed during calibration");
  return quant_for_range(t.observed_min, t.observed_max);
}

}  // namespace

void assign_quantization(Graph& g) {
  for (int t : g.inputs) g.tensors[t].quant = observed_quant(g.tensors[t]);
  for (const Op& op : g.ops) {
    Tensor& y = g.tensors[op.outputs[0]];
    const Quant& x = g.tensors[op.inputs[0]].quant;
    const OpDef* def = find_op(op.kind);
    const OutputQuant rule = def ? def->output_quant : OutputQuant::kObserved;
    if (rule == OutputQuant::kNone) continue;
    if (rule == OutputQuant::kInput || (rule == OutputQuant::kInputWhenValueFits && value_fits(op, x))) {
      y.quant = x;
    } else if (rule == OutputQuant::kSoftmax) {
      y.quant = Quant{true, 1.0f / 256.0f, -128};
    } else {
      y.quant = observed_quant(y);
    }
  }
}

namespace {

const char* const kObserverNames[] = {"minmax", "percentile", "mse"};

// How many bins from the start of [first, last) hold the first `rank` values, interpolating
// linearly inside the bin where the count is reached.
template <typename It>
double bins_holding(It first, It last, double rank) {
  double below = 0;
  size_t k = 0;
  for (It it = first; it != last; ++it, ++k) {
    const double count = double(*it);
    if (count > 0 && below + count >= rank) return double(k) + (rank - below) / count;
    below += count;
  }
  return double(k);
}

}  // namespace

Observer parse_observer(const std::string& name) {
  for (size_t i = 0; i < std::size(kObserverNames); ++i) {
    if (name == kObserverNames[i]) return Observer(i);
  }
  std::string known;
  for (const char* n : kObserverNames) known += (known.empty() ? "" : ", ") + std::string(n);
  throw CompileError("unknown observer '" + name + "' (" + known + ")");
}

const char* observer_name(Observer kind) { return kObserverNames[size_t(kind)]; }

void check_observer_options(const ObserverOptions& options) {
  if (options.kind == Observer::kPercentile && !(options.percentile > 50 && options.percentile <= 100)) {
    std::ostringstream os;
    os << "percentile must be above 50 and at most 100, got " << options.percentile;
    throw CompileError(os.str());
  }
}

Histogram::Histogram(float lo, float hi, int bins) : lo_(lo), hi_(hi), counts_(size_t(std::max(bins, 1)), 0) {
  if (!(lo < hi) || !std::isfinite(lo) || !std::isfinite(hi))
    throw CompileError("internal: a histogram needs a finite range with lo < hi");
}

void Histogram::add(const float* values, size_t n) {
  const double bins = double(counts_.size());
  const double per_unit = bins / (double(hi_) - double(lo_));
  for (size_t i = 0; i < n; ++i) {
    const double position = (double(values[i]) - lo_) * per_unit;
    ++counts_[position <= 0 ? 0 : position >= bins ? counts_.size() - 1 : size_t(position)];
  }
}

float Histogram::edge(size_t i) const {
  if (i >= counts_.size()) return hi_;
  return float(lo_ + (double(hi_) - double(lo_)) * double(i) / double(counts_.size()));
}

Range percentile_range(const Histogram& h, double percentile) {
  const std::vector<uint64_t>& c = h.counts();
  double total = 0;
  for (uint64_t n : c) total += double(n);
  const double beyond = total * (100.0 - percentile) / 100.0;  // values clipped on each side
  const double width = (double(h.hi()) - double(h.lo())) / double(c.size());
  const double below = bins_holding(c.begin(), c.end(), beyond);
  const double above = bins_holding(c.rbegin(), c.rend(), beyond);
  // A side that does not reach past zero quantizes the same wherever it is (ranges include 0):
  // keep it as observed rather than report a meaningless clip (a ReLU output's many zeros).
  return Range{h.lo() >= 0 ? h.lo() : float(h.lo() + below * width),
               h.hi() <= 0 ? h.hi() : float(h.hi() - above * width)};
}

Range mse_range(const Histogram& h) {
  // Everything in bin units: bin k holds positions [k, k + 1), zero sits at `zero`.
  const std::vector<uint64_t>& c = h.counts();
  const size_t n = c.size();
  using Real = long double;
  // Prefix sums over bins below an edge: counts, first and second moments (uniform in a bin:
  // mean k + 1/2, mean square (k + 1/2)² + 1/12).
  std::vector<Real> count(n + 1, 0), moment1(n + 1, 0), moment2(n + 1, 0);
  for (size_t k = 0; k < n; ++k) {
    const Real center = Real(k) + 0.5L, weight = Real(c[k]);
    count[k + 1] = count[k] + weight;
    moment1[k + 1] = moment1[k] + weight * center;
    moment2[k + 1] = moment2[k] + weight * (center * center + 1.0L / 12);
  }
  const Real zero = -Real(h.lo()) / ((Real(h.hi()) - Real(h.lo())) / Real(n));
  // Squared distance of the values in bins [from, to) to position `clip`.
  const auto clipped_error = [&](size_t from, size_t to, Real clip) {
    return (moment2[to] - moment2[from]) - 2 * clip * (moment1[to] - moment1[from]) +
           clip * clip * (count[to] - count[from]);
  };
  // Lower clips at or below zero (or the lowest edge), upper clips at or above it (or the highest).
  const size_t last_lower = size_t(std::clamp(std::floor(zero), Real(0), Real(n)));
  const size_t first_upper = size_t(std::clamp(std::ceil(zero), Real(0), Real(n)));
  Real best_error = std::numeric_limits<Real>::infinity();
  size_t best_lower = 0, best_upper = n;
  for (size_t lower = 0; lower <= last_lower; ++lower) {
    const Real below = clipped_error(0, lower, Real(lower));
    for (size_t upper = n; upper >= std::max(first_upper, lower + 1); --upper) {
      const Real step = (std::max(Real(upper), zero) - std::min(Real(lower), zero)) / 255;
      const Real error = below + clipped_error(upper, n, Real(upper)) +
                         (count[upper] - count[lower]) * step * step / 12;
      if (error < best_error) best_error = error, best_lower = lower, best_upper = upper;
    }
  }
  return Range{h.edge(best_lower), h.edge(best_upper)};
}

Range observer_range(const Histogram& h, const ObserverOptions& options) {
  switch (options.kind) {
    case Observer::kPercentile: return percentile_range(h, options.percentile);
    case Observer::kMse: return mse_range(h);
    case Observer::kMinMax: break;
  }
  return Range{h.lo(), h.hi()};
}

}  // namespace mcuflow::compiler
