// The int16 kernels (A16W8) against a straightforward model of their integer arithmetic
// (128-bit intermediates, written from docs/quantization.md, sharing nothing with the
// kernels) on random shapes and at the saturation edges, and against double-precision math
// on the dequantized values.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "mcuflow/kernels/arith.h"
#include "mcuflow/kernels/kernels.h"
#include "mcuflow/kernels/lut_s16.h"
#include "mcuflow/kernels/softmax_s16.h"
#include "test_util.h"

using namespace mcuflow::kernels;
using namespace mcuflow::test;

namespace {

using i128 = __int128;

i128 floor_div(i128 a, i128 b) {  // b > 0
  const i128 q = a / b;
  return (a % b != 0 && a < 0) ? q - 1 : q;
}

// The wide requantization: the Q31 multiplier rounded half up to Q15 (at most 2^15 - 1),
// then x * m15 / 2^(15 - shift) rounded half up.
int64_t model_wide_requant(int64_t x, int32_t multiplier, int32_t shift) {
  const int64_t m15 = std::min<int64_t>(floor_div(i128(multiplier) + (1 << 15), 1 << 16), 32767);
  const i128 d = i128(1) << (15 - shift);
  return int64_t(floor_div(i128(x) * m15 + d / 2, d));
}

// The int32 requantization: round-half-up doubling high multiply (saturating), then a
// division by 2^-shift rounding half away from zero; a positive shift multiplies first.
int32_t model_requant(int32_t x, int32_t multiplier, int32_t shift) {
  const int32_t shifted = int32_t(uint32_t(x) << (shift > 0 ? shift : 0));  // wraps, as the kernels define it
  const int64_t high = shifted == INT32_MIN && multiplier == INT32_MIN
                           ? INT32_MAX
                           : int64_t(floor_div(i128(shifted) * multiplier + (i128(1) << 30), i128(1) << 31));
  const int right = shift > 0 ? 0 : -shift;
  const double v = double(high) / double(int64_t(1) << right);  // exact: |high| <= 2^31
  return int32_t(v < 0 ? -std::floor(-v + 0.5) : std::floor(v + 0.5));
}

int16_t clamp16(int64_t v, int32_t lo, int32_t hi) { return int16_t(std::min<int64_t>(hi, std::max<int64_t>(lo, v))); }

std::vector<int16_t> int16s(Rng& rng, size_t n, int32_t lo = -32768, int32_t hi = 32767) {
  std::vector<int16_t> v(n);
  for (auto& x : v) x = int16_t(rng.uniform_int(lo, hi));
  return v;
}

std::vector<int64_t> biases(Rng& rng, size_t n, int64_t magnitude) {
  std::vector<int64_t> v(n);
  for (auto& b : v) b = int64_t(rng.uniform(-1.0, 1.0) * double(magnitude));
  return v;
}

// Multipliers of a real factor near `scale` per channel, shifts within the int16 kernels' range.
void random_tables(Rng& rng, size_t n, double lo, double hi, std::vector<int32_t>& mult, std::vector<int32_t>& shift) {
  std::vector<double> real(n);
  for (auto& r : real) r = rng.log_uniform(lo, hi);
  multipliers_for(real, mult, shift);
}

OutputStage random_stage(Rng& rng) {
  switch (rng.uniform_int(0, 2)) {
    case 0: return {0, -32768, 32767};
    case 1: return {0, 0, 32767};
    default: return {0, rng.uniform_int(-32768, 0), rng.uniform_int(1, 32767)};
  }
}

}  // namespace

TEST(WideRequant, MatchesModelAtTheEdges) {
  const int64_t edge = (int64_t(1) << 47) - 1;
  Rng rng(1601);
  for (int64_t x : {int64_t(0), int64_t(1), int64_t(-1), edge, -edge, int64_t(1) << 40, -(int64_t(1) << 40) - 1}) {
    for (int32_t m : {0, 1 << 30, (1 << 30) + 32767, (1 << 30) + 32768, INT32_MAX, 0x7FFF0000, 0x7FFF7FFF}) {
      for (int32_t s : {-31, -20, -1, 0, 1, 14}) {
        ASSERT_EQ(multiply_by_quantized_multiplier_wide(x, m, s), model_wide_requant(x, m, s)) << x << " " << m << " " << s;
      }
    }
  }
  for (int i = 0; i < 20000; ++i) {
    const int64_t x = int64_t(rng.uniform(-1.0, 1.0) * double(edge));
    const int32_t m = rng.uniform_int(1 << 30, INT32_MAX), s = rng.uniform_int(-31, 14);
    ASSERT_EQ(multiply_by_quantized_multiplier_wide(x, m, s), model_wide_requant(x, m, s)) << x << " " << m << " " << s;
  }
}

TEST(FcS16, RandomShapesMatchModelAndDouble) {
  Rng rng(1602);
  size_t close = 0, total = 0;
  for (int i = 0; i < 300; ++i) {
    const int32_t rows = rng.uniform_int(1, 3), in_c = rng.uniform_int(1, 300), out_c = rng.uniform_int(1, 9);
    const bool per_channel = rng.coin();
    const auto input = int16s(rng, size_t(rows * in_c));
    const auto weights = rng.int8s(size_t(out_c * in_c), -127, 127);
    const auto bias = biases(rng, size_t(out_c), int64_t(1) << 30);
    std::vector<int32_t> mult, shift;
    // A factor near 1 / (the accumulator's typical magnitude / 2^15) keeps outputs mostly unsaturated.
    const double typical = 32768.0 * 127.0 * std::sqrt(double(in_c));
    random_tables(rng, per_channel ? size_t(out_c) : 1, 3000.0 / typical, 60000.0 / typical, mult, shift);
    const OutputStage o = random_stage(rng);
    const FcParams p{rows, in_c, out_c, per_channel ? 1 : 0, 0, o, 0.0f, 0.0f};
    std::vector<int16_t> got(size_t(rows * out_c));
    fc_s16(p, input.data(), weights.data(), bias.data(), mult.data(), shift.data(), got.data());
    for (int32_t r = 0; r < rows; ++r)
      for (int32_t oc = 0; oc < out_c; ++oc) {
        int64_t acc = bias[size_t(oc)];
        for (int32_t k = 0; k < in_c; ++k) acc += int64_t(input[size_t(r * in_c + k)]) * weights[size_t(oc * in_c + k)];
        const size_t q = per_channel ? size_t(oc) : 0;
        const int16_t want = clamp16(model_wide_requant(acc, mult[q], shift[q]), o.act_min, o.act_max);
        ASSERT_EQ(got[size_t(r * out_c + oc)], want) << "case " << i;
        const double real = double(acc) * std::ldexp(double(mult[q]), shift[q] - 31);
        const double ideal = std::min<double>(o.act_max, std::max<double>(o.act_min, round_half_away(real)));
        // The Q15 multiplier's relative error is below 2^-15: at most one more step at full scale.
        ASSERT_LE(std::fabs(want - ideal), 2.0) << "case " << i;
        close += want == ideal;
        ++total;
      }
  }
  EXPECT_GT(double(close) / double(total), 0.9);
}

TEST(FcS16, SaturatesAtTheAccumulatorBound) {
  // The largest reduction a 2^47 accumulator allows with the extreme operands, and a bias
  // that fills the rest: the kernel computes the exact sum and saturates the output.
  const int32_t in_c = 1 << 14;
  std::vector<int16_t> input(size_t(in_c), -32768);
  std::vector<int8_t> weights(2 * size_t(in_c));
  for (int32_t k = 0; k < in_c; ++k) weights[size_t(k)] = -128, weights[size_t(in_c + k)] = 127;
  const int64_t sum0 = int64_t(in_c) * 32768 * 128, sum1 = -int64_t(in_c) * 32768 * 127;
  const std::vector<int64_t> bias = {(int64_t(1) << 47) - 1 - sum0, -((int64_t(1) << 47) - 1) - sum1};
  const int32_t mult[2] = {INT32_MAX, INT32_MAX}, shift[2] = {14, -31};
  const FcParams p{1, in_c, 2, 1, 0, {0, -32768, 32767}, 0.0f, 0.0f};
  int16_t out[2];
  fc_s16(p, input.data(), weights.data(), bias.data(), mult, shift, out);
  EXPECT_EQ(out[0], 32767);
  EXPECT_EQ(out[1], -32768);  // -(2^47 - 1) * (2^15 - 1) / 2^46, about -65534, clamped
  EXPECT_EQ(multiply_by_quantized_multiplier_wide(-((int64_t(1) << 47) - 1), INT32_MAX, -31), -65534);
}

TEST(ConvS16, RandomGroupedGeometriesMatchModel) {
  Rng rng(1603);
  for (int i = 0; i < 200; ++i) {
    const Geometry g = random_geometry(rng, true, 7);
    const int32_t groups = rng.uniform_int(1, 3), group_in = rng.uniform_int(1, 4), group_out = rng.uniform_int(1, 3);
    const int32_t in_c = groups * group_in, out_c = groups * group_out;
    const auto input = int16s(rng, size_t(g.in_h * g.in_w * in_c));
    const auto weights = rng.int8s(size_t(out_c * g.k_h * g.k_w * group_in), -127, 127);
    const auto bias = biases(rng, size_t(out_c), int64_t(1) << 36);
    std::vector<int32_t> mult, shift;
    const double typical = 32768.0 * 127.0 * std::sqrt(double(g.k_h * g.k_w * group_in));
    random_tables(rng, size_t(out_c), 3000.0 / typical, 60000.0 / typical, mult, shift);
    ConvParams p{};
    p.groups = groups;
    p.in_h = g.in_h; p.in_w = g.in_w; p.in_c = in_c; p.out_h = g.out_h; p.out_w = g.out_w; p.out_c = out_c;
    p.k_h = g.k_h; p.k_w = g.k_w; p.stride_h = g.stride_h; p.stride_w = g.stride_w;
    p.pad_top = g.pad_top; p.pad_left = g.pad_left; p.dil_h = g.dil_h; p.dil_w = g.dil_w;
    p.out = random_stage(rng);
    std::vector<int16_t> got(size_t(g.out_h * g.out_w * out_c));
    conv_s16(p, input.data(), weights.data(), bias.data(), mult.data(), shift.data(), got.data());
    for (int32_t oy = 0; oy < g.out_h; ++oy)
      for (int32_t ox = 0; ox < g.out_w; ++ox)
        for (int32_t oc = 0; oc < out_c; ++oc) {
          int64_t acc = bias[size_t(oc)];
          for (int32_t ky = 0; ky < g.k_h; ++ky)
            for (int32_t kx = 0; kx < g.k_w; ++kx) {
              const int32_t iy = oy * g.stride_h - g.pad_top + ky * g.dil_h, ix = ox * g.stride_w - g.pad_left + kx * g.dil_w;
              if (iy < 0 || iy >= g.in_h || ix < 0 || ix >= g.in_w) continue;
              for (int32_t ic = 0; ic < group_in; ++ic)
                acc += int64_t(input[size_t((iy * g.in_w + ix) * in_c + oc / group_out * group_in + ic)]) *
                       weights[size_t(((oc * g.k_h + ky) * g.k_w + kx) * group_in + ic)];
            }
          const int16_t want = clamp16(model_wide_requant(acc, mult[size_t(oc)], shift[size_t(oc)]), p.out.act_min, p.out.act_max);
          ASSERT_EQ(got[size_t((oy * g.out_w + ox) * out_c + oc)], want) << "case " << i;
        }
  }
}

TEST(DwConvS16, RandomGeometriesMatchModel) {
  Rng rng(1604);
  for (int i = 0; i < 200; ++i) {
    const Geometry g = random_geometry(rng, true, 7);
    const int32_t in_c = rng.uniform_int(1, 6), ch_mult = rng.uniform_int(1, 3), out_c = in_c * ch_mult;
    const auto input = int16s(rng, size_t(g.in_h * g.in_w * in_c));
    const auto weights = rng.int8s(size_t(g.k_h * g.k_w * out_c), -127, 127);
    const auto bias = biases(rng, size_t(out_c), int64_t(1) << 30);
    std::vector<int32_t> mult, shift;
    const double typical = 32768.0 * 127.0 * std::sqrt(double(g.k_h * g.k_w));
    random_tables(rng, size_t(out_c), 3000.0 / typical, 60000.0 / typical, mult, shift);
    DwConvParams p{};
    p.in_h = g.in_h; p.in_w = g.in_w; p.in_c = in_c; p.out_h = g.out_h; p.out_w = g.out_w; p.out_c = out_c;
    p.ch_mult = ch_mult; p.k_h = g.k_h; p.k_w = g.k_w; p.stride_h = g.stride_h; p.stride_w = g.stride_w;
    p.pad_top = g.pad_top; p.pad_left = g.pad_left; p.dil_h = g.dil_h; p.dil_w = g.dil_w;
    p.out = random_stage(rng);
    std::vector<int16_t> got(size_t(g.out_h * g.out_w * out_c));
    dwconv_s16(p, input.data(), weights.data(), bias.data(), mult.data(), shift.data(), got.data());
    for (int32_t oy = 0; oy < g.out_h; ++oy)
      for (int32_t ox = 0; ox < g.out_w; ++ox)
        for (int32_t oc = 0; oc < out_c; ++oc) {
          int64_t acc = bias[size_t(oc)];
          for (int32_t ky = 0; ky < g.k_h; ++ky)
            for (int32_t kx = 0; kx < g.k_w; ++kx) {
              const int32_t iy = oy * g.stride_h - g.pad_top + ky * g.dil_h, ix = ox * g.stride_w - g.pad_left + kx * g.dil_w;
              if (iy < 0 || iy >= g.in_h || ix < 0 || ix >= g.in_w) continue;
              acc += int64_t(input[size_t((iy * g.in_w + ix) * in_c + oc / ch_mult)]) * weights[size_t((ky * g.k_w + kx) * out_c + oc)];
            }
          const int16_t want = clamp16(model_wide_requant(acc, mult[size_t(oc)], shift[size_t(oc)]), p.out.act_min, p.out.act_max);
          ASSERT_EQ(got[size_t((oy * g.out_w + ox) * out_c + oc)], want) << "case " << i;
        }
  }
}

TEST(BinaryS16, AddAndMulMatchModel) {
  Rng rng(1605);
  for (int i = 0; i < 300; ++i) {
    BinaryParams p{};
    p.outer = rng.uniform_int(1, 5);
    p.inner = rng.uniform_int(1, 17);
    p.in2_mode = rng.uniform_int(0, 2);
    const size_t n = size_t(p.outer * p.inner), n2 = p.in2_mode == 0 ? n : p.in2_mode == 1 ? size_t(p.inner) : 1;
    const auto a = int16s(rng, n), b = int16s(rng, n2);
    const double s1 = rng.log_uniform(1e-4, 1e-2), s2 = rng.log_uniform(1e-4, 1e-2), so_add = (s1 + s2) * rng.uniform(0.5, 1.2);
    const auto add = mcuflow::compiler::add_rescale(s1, s2, so_add);
    p.left_shift = 15;
    p.input1_multiplier = add.input1.multiplier; p.input1_shift = add.input1.shift;
    p.input2_multiplier = add.input2.multiplier; p.input2_shift = add.input2.shift;
    // add_rescale gives 20 bits of headroom; with 15 the output factor is 2^5 larger.
    const auto out = mcuflow::compiler::quantize_multiplier(2.0 * std::max(s1, s2) / (32768.0 * so_add));
    p.output_multiplier = out.multiplier; p.output_shift = out.shift;
    const OutputStage o = random_stage(rng);
    p.act_min = o.act_min; p.act_max = o.act_max;
    std::vector<int16_t> got(n);
    add_s16(p, a.data(), b.data(), got.data());
    for (size_t k = 0; k < n; ++k) {
      const size_t k2 = p.in2_mode == 0 ? k : p.in2_mode == 1 ? k % size_t(p.inner) : 0;
      const int32_t x = model_requant(a[k] * (1 << 15), p.input1_multiplier, p.input1_shift);
      const int32_t y = model_requant(b[k2] * (1 << 15), p.input2_multiplier, p.input2_shift);
      const int16_t want = clamp16(model_requant(x + y, p.output_multiplier, p.output_shift), p.act_min, p.act_max);
      ASSERT_EQ(got[k], want) << "add case " << i;
      const double ideal = (a[k] * s1 + b[k2] * s2) / so_add;
      if (ideal > p.act_min && ideal < p.act_max) ASSERT_LE(std::fabs(want - ideal), 1.0);
    }
    const double so_mul = s1 * s2 * 32768.0 * rng.uniform(0.5, 1.5);
    const auto m = mcuflow::compiler::mul_rescale(s1, s2, so_mul);
    p.output_multiplier = m.multiplier; p.output_shift = m.shift;
    mul_s16(p, a.data(), b.data(), got.data());
    for (size_t k = 0; k < n; ++k) {
      const size_t k2 = p.in2_mode == 0 ? k : p.in2_mode == 1 ? k % size_t(p.inner) : 0;
      const int16_t want = clamp16(model_requant(a[k] * b[k2], m.multiplier, m.shift), p.act_min, p.act_max);
      ASSERT_EQ(got[k], want) << "mul case " << i;
    }
  }
}

TEST(PoolS16, MaxAndAverageMatchModel) {
  Rng rng(1606);
  for (int i = 0; i < 200; ++i) {
    Geometry g = random_geometry(rng, false, 8);
    if (g.pad_top >= g.k_h || g.pad_left >= g.k_w) continue;
    PoolParams p{g.in_h, g.in_w, rng.uniform_int(1, 5), g.out_h, g.out_w, g.k_h, g.k_w, g.stride_h, g.stride_w,
                 g.pad_top, g.pad_left, -32768, 32767, 0.0f, 0.0f};
    if ((p.out_h - 1) * p.stride_h - p.pad_top >= p.in_h || (p.out_w - 1) * p.stride_w - p.pad_left >= p.in_w) continue;
    if (rng.coin()) p.act_min = rng.uniform_int(-32768, 0), p.act_max = rng.uniform_int(1, 32767);
    // Extreme values in every window exercise the int64 sum and the clamp.
    const auto input = int16s(rng, size_t(p.in_h * p.in_w * p.c), rng.coin() ? 32000 : -32768, 32767);
    std::vector<int16_t> got_max(size_t(p.out_h * p.out_w * p.c)), got_avg(got_max.size());
    maxpool_s16(p, input.data(), got_max.data());
    avgpool_s16(p, input.data(), got_avg.data());
    size_t k = 0;
    for (int32_t oy = 0; oy < p.out_h; ++oy)
      for (int32_t ox = 0; ox < p.out_w; ++ox)
        for (int32_t c = 0; c < p.c; ++c, ++k) {
          int64_t sum = 0, count = 0;
          int32_t best = -32768;
          for (int32_t ky = 0; ky < p.k_h; ++ky)
            for (int32_t kx = 0; kx < p.k_w; ++kx) {
              const int32_t iy = oy * p.stride_h - p.pad_top + ky, ix = ox * p.stride_w - p.pad_left + kx;
              if (iy < 0 || iy >= p.in_h || ix < 0 || ix >= p.in_w) continue;
              const int16_t v = input[size_t((iy * p.in_w + ix) * p.c + c)];
              sum += v, ++count, best = std::max<int32_t>(best, v);
            }
          ASSERT_EQ(got_max[k], clamp16(best, p.act_min, p.act_max)) << "case " << i;
          ASSERT_EQ(got_avg[k], clamp16(int64_t(round_half_away(double(sum) / double(count))), p.act_min, p.act_max))
              << "case " << i;
        }
  }
}

TEST(ConvertS16, QuantizeDequantizeEdges) {
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  const float in[] = {0.5f, -0.5f, 2.5f, -2.5f, 1e9f, -1e9f, inf, -inf, nan, 32767.4f, -32768.6f, 1.49f};
  const int16_t want[] = {1, -1, 3, -3, 32767, -32768, 32767, -32768, -32768, 32767, -32768, 1};
  const QuantizeParams p{12, 1.0f, 0};
  int16_t q[12];
  quantize_f32_s16(p, in, q);
  for (int i = 0; i < 12; ++i) EXPECT_EQ(q[i], want[i]) << i;
  const QuantizeParams scaled{12, 0.25f, 0};
  quantize_f32_s16(scaled, in, q);
  EXPECT_EQ(q[0], 2);
  EXPECT_EQ(q[11], 6);  // 5.96 -> 6
  float back[12];
  dequantize_s16_f32(scaled, q, back);
  EXPECT_EQ(back[4], 0.25f * 32767.0f);
  EXPECT_EQ(back[5], -0.25f * 32768.0f);
}

TEST(ConvertS16, RequantizeBothWaysMatchesModel) {
  Rng rng(1607);
  for (int i = 0; i < 200; ++i) {
    const int32_t n = rng.uniform_int(1, 64);
    const int32_t zp8 = rng.uniform_int(-128, 127);
    const double s8 = rng.log_uniform(1e-3, 1e-1), s16 = s8 / 256.0 * rng.uniform(0.3, 2.0);
    const auto up = mcuflow::compiler::quantize_multiplier(s8 / s16);
    const RequantizeParams to16{n, -zp8, 0, up.multiplier, up.shift, -32768, 32767};
    const auto x8 = rng.int8s(size_t(n));
    std::vector<int16_t> y16(static_cast<size_t>(n));
    requantize_s8_s16(to16, x8.data(), y16.data());
    for (int32_t k = 0; k < n; ++k)
      ASSERT_EQ(y16[size_t(k)], clamp16(model_requant(x8[size_t(k)] - zp8, up.multiplier, up.shift), -32768, 32767));
    const auto down = mcuflow::compiler::quantize_multiplier(s16 / s8);
    const RequantizeParams to8{n, 0, zp8, down.multiplier, down.shift, -128, 127};
    const auto x16 = int16s(rng, size_t(n));
    std::vector<int8_t> y8(static_cast<size_t>(n));
    requantize_s16_s8(to8, x16.data(), y8.data());
    for (int32_t k = 0; k < n; ++k) {
      const int32_t want = std::min(127, std::max(-128, model_requant(x16[size_t(k)], down.multiplier, down.shift) + zp8));
      ASSERT_EQ(y8[size_t(k)], want);
    }
  }
}

namespace {

// lut_s16 as docs/quantization.md states it: input x reads entries i = (x + 32768) / 128 and
// i + 1, f = (x + 32768) mod 128, and gives floor((t[i] (128 - f) + t[i + 1] f + 64) / 128).
int32_t model_lut_s16(const std::vector<int16_t>& table, int32_t x) {
  const int64_t u = x + 32768, i = u / 128, f = u % 128;
  return int32_t(floor_div(i128(table[size_t(i)]) * (128 - f) + i128(table[size_t(i + 1)]) * f + 64, 128));
}

}  // namespace

TEST(LutS16, EveryInputMatchesModelOnExtremeTables) {
  Rng rng(171);
  std::vector<int16_t> input(65536), output(65536);
  for (int32_t x = -32768; x <= 32767; ++x) input[size_t(x + 32768)] = int16_t(x);
  for (int trial = 0; trial < 4; ++trial) {
    std::vector<int16_t> table(static_cast<size_t>(kLutS16Entries));
    for (auto& t : table) t = int16_t(trial == 0 ? (rng.coin() ? -32768 : 32767) : rng.uniform_int(-32768, 32767));
    lut_s16(LutParams{65536}, input.data(), table.data(), output.data());
    for (int32_t x = -32768; x <= 32767; ++x) ASSERT_EQ(output[size_t(x + 32768)], model_lut_s16(table, x)) << x;
  }
}

TEST(SoftmaxS16, RandomRowsWithinTwoStepsOfTheExactQuotient) {
  // The kernel's probabilities against 32768 e / sum computed exactly from its own exp values
  // (model_lut_s16 of the table at z), and against float softmax of the dequantized inputs.
  Rng rng(172);
  std::vector<int16_t> table(static_cast<size_t>(kLutS16Entries));
  for (int32_t i = 0; i < kLutS16Entries; ++i)
    table[size_t(i)] = int16_t(std::min(32767.0, std::round(32768.0 * std::exp(-kSoftmaxS16ExpRange * i / 512))));
  for (int trial = 0; trial < 40; ++trial) {
    const double scale = rng.log_uniform(1e-4, 0.05);
    const int32_t depth = trial == 0 ? 1 : rng.uniform_int(1, trial < 35 ? 64 : 3000);
    int exponent = 0;
    const double mantissa = std::frexp(scale * 65536.0 / kSoftmaxS16ExpRange, &exponent);
    SoftmaxS16Params p{rng.uniform_int(1, 3), depth, int32_t(std::lround(std::ldexp(mantissa, 15))), 15 - exponent};
    if (p.diff_multiplier == 1 << 15) p.diff_multiplier >>= 1, p.diff_shift -= 1;
    std::vector<int16_t> x(size_t(p.rows * depth)), y(x.size());
    for (auto& v : x) v = int16_t(rng.uniform_int(-32768, 32767));
    softmax_s16(p, x.data(), table.data(), y.data());
    for (int32_t r = 0; r < p.rows; ++r) {
      const int16_t* row = x.data() + r * depth;
      const int32_t m = *std::max_element(row, row + depth);
      std::vector<int64_t> e(static_cast<size_t>(depth));
      int64_t sum = 0;
      double float_sum = 0;
      for (int32_t i = 0; i < depth; ++i) {
        const int64_t d = m - row[i];
        const int64_t z = std::min<int64_t>(65535, (d * p.diff_multiplier + (int64_t(1) << (p.diff_shift - 1))) >> p.diff_shift);
        e[size_t(i)] = model_lut_s16(table, int32_t(z) - 32768);
        sum += e[size_t(i)];
        float_sum += std::exp(-double(d) * scale);
      }
      for (int32_t i = 0; i < depth; ++i) {
        const int32_t got = y[size_t(r * depth + i)];
        ASSERT_GE(got, 0);
        ASSERT_LE(std::abs(got - std::min(32767.0, 32768.0 * double(e[size_t(i)]) / double(sum))), 2.0)
            << "trial " << trial << " row " << r << " element " << i;
        ASSERT_LE(std::abs(got - 32768.0 * std::exp(-double(m - row[i]) * scale) / float_sum), 12.0)
            << "trial " << trial << " row " << r << " element " << i;
      }
    }
  }
}
