// Shared helpers of the kernel tests: a seeded random source, the quantization of double
// reference values, random output quantization and random conv/pool geometries. The
// references the tests compare against are plain double-precision math on the dequantized
// inputs: nothing here shares code with the kernels.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "mcuflow/compiler/quant_math.h"

namespace mcuflow::test {

class Rng {
 public:
  explicit Rng(uint32_t seed) : gen_(seed) {}
  int32_t uniform_int(int32_t lo, int32_t hi) {  // inclusive
    return std::uniform_int_distribution<int32_t>(lo, hi)(gen_);
  }
  double uniform(double lo, double hi) { return std::uniform_real_distribution<double>(lo, hi)(gen_); }
  double log_uniform(double lo, double hi) { return std::exp(uniform(std::log(lo), std::log(hi))); }
  bool coin(double p_true = 0.5) { return uniform(0.0, 1.0) < p_true; }
  std::vector<int8_t> int8s(size_t n, int32_t lo = -128, int32_t hi = 127) {
    std::vector<int8_t> v(n);
    for (auto& x : v) x = static_cast<int8_t>(uniform_int(lo, hi));
    return v;
  }
  std::vector<float> floats(size_t n, double lo, double hi) {
    std::vector<float> v(n);
    for (auto& x : v) x = static_cast<float>(uniform(lo, hi));
    return v;
  }

 private:
  std::mt19937 gen_;
};

inline int32_t clampi(int32_t x, int32_t lo, int32_t hi) { return std::min(hi, std::max(lo, x)); }

inline double round_half_away(double x) { return x < 0 ? -std::floor(-x + 0.5) : std::floor(x + 0.5); }

// The ideal int8 value of a real number: clamp(round(x / scale) + zp, lo, hi).
inline int32_t quantize_ref(double x, double scale, int32_t zp, int32_t lo = -128, int32_t hi = 127) {
  const double q = round_half_away(x / scale) + zp;
  return static_cast<int32_t>(std::min<double>(hi, std::max<double>(lo, q)));
}

struct Quant {
  double scale;
  int32_t zp;
};

// A random activation quantization: scale log-uniform, zero point anywhere in int8.
inline Quant random_act_quant(Rng& rng) { return {rng.log_uniform(0.004, 0.2), rng.uniform_int(-128, 127)}; }

// An output quantization fitted to the reference values (as calibration would do), sometimes
// a bit too narrow so that saturation is exercised as well.
inline Quant fit_output_quant(const std::vector<double>& ref, Rng& rng) {
  double lo = 0.0, hi = 0.0;
  for (double v : ref) {
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  }
  if (hi - lo < 1e-6) hi = lo + 1.0;
  const double scale = (hi - lo) / 255.0 * rng.uniform(0.7, 1.1);
  const int32_t zp = static_cast<int32_t>(std::min(127.0, std::max(-128.0, round_half_away(-128.0 - lo / scale))));
  return {scale, zp};
}

// A random fused activation in the output's integer domain: none, ReLU or ReLU6.
struct ActRange {
  int32_t lo, hi;
};
inline ActRange random_act(Rng& rng, const Quant& out) {
  switch (rng.uniform_int(0, 2)) {
    case 0: return {-128, 127};
    case 1: return {std::max(-128, out.zp), 127};
    default: {
      const double six = round_half_away(6.0 / out.scale) + out.zp;
      return {std::max(-128, out.zp), static_cast<int32_t>(std::min(127.0, std::max<double>(out.zp, six)))};
    }
  }
}

// A random 2-D window geometry: kernel, stride, dilation, padding on every side (< the
// dilated kernel extent, as SAME/explicit padding produce) and the resulting output size.
struct Geometry {
  int32_t in_h, in_w, k_h, k_w, stride_h, stride_w, dil_h, dil_w, pad_top, pad_left, out_h, out_w;
};
inline Geometry random_geometry(Rng& rng, bool allow_dilation, int32_t max_in = 9) {
  for (;;) {
    Geometry g{};
    g.in_h = rng.uniform_int(1, max_in);
    g.in_w = rng.uniform_int(1, max_in);
    g.k_h = rng.uniform_int(1, 4);
    g.k_w = rng.uniform_int(1, 4);
    g.stride_h = rng.uniform_int(1, 3);
    g.stride_w = rng.uniform_int(1, 3);
    g.dil_h = allow_dilation ? rng.uniform_int(1, 2) : 1;
    g.dil_w = allow_dilation ? rng.uniform_int(1, 2) : 1;
    const int32_t ext_h = (g.k_h - 1) * g.dil_h + 1, ext_w = (g.k_w - 1) * g.dil_w + 1;
    g.pad_top = rng.uniform_int(0, ext_h - 1);
    g.pad_left = rng.uniform_int(0, ext_w - 1);
    const int32_t pad_bottom = rng.uniform_int(0, ext_h - 1), pad_right = rng.uniform_int(0, ext_w - 1);
    const int32_t span_h = g.in_h + g.pad_top + pad_bottom - ext_h;
    const int32_t span_w = g.in_w + g.pad_left + pad_right - ext_w;
    if (span_h < 0 || span_w < 0) continue;
    g.out_h = span_h / g.stride_h + 1;
    g.out_w = span_w / g.stride_w + 1;
    return g;
  }
}

// Compares kernel output with the ideal quantized values: every element within `tol` steps.
// Returns the number of exact matches (tests also require most outputs to be exact).
struct Diff {
  size_t exact = 0, total = 0;
  int32_t max_abs = 0;
};
inline Diff diff_int8(const std::vector<int8_t>& got, const std::vector<int32_t>& want) {
  Diff d;
  d.total = got.size();
  for (size_t i = 0; i < got.size(); ++i) {
    const int32_t e = std::abs(static_cast<int32_t>(got[i]) - want[i]);
    d.max_abs = std::max(d.max_abs, e);
    d.exact += e == 0;
  }
  return d;
}

// Per-channel (or per-tensor) requantization parameters from real multipliers.
inline void multipliers_for(const std::vector<double>& real, std::vector<int32_t>& mult, std::vector<int32_t>& shift) {
  mult.resize(real.size());
  shift.resize(real.size());
  for (size_t i = 0; i < real.size(); ++i) {
    const auto q = compiler::quantize_multiplier(real[i]);
    mult[i] = q.multiplier;
    shift[i] = q.shift;
  }
}

}  // namespace mcuflow::test
