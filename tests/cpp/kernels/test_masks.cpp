// The mask kernels: compare_s8 / compare_f32 against comparisons of the real values in double
// for every broadcast mode, where_s8 / where_f32 against the ideal requantization of the
// value the mask picks, and gather_rows (embedding) with ids inside and outside its table.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <functional>

#include "mcuflow/compiler/quant_math.h"
#include "mcuflow/kernels/kernels.h"
#include "test_util.h"

using namespace mcuflow::kernels;
using namespace mcuflow::test;
using mcuflow::compiler::quantize_multiplier;

namespace {

bool compare_ref(int32_t op, double a, double b) {
  static const std::function<bool(double, double)> kOps[] = {
      std::equal_to<double>(), std::not_equal_to<double>(), std::less<double>(),
      std::less_equal<double>(), std::greater<double>(), std::greater_equal<double>()};
  return kOps[op](a, b);
}

// Index of input2's element for output element n under in2_mode.
int32_t second_index(int32_t mode, int32_t n, int32_t inner) { return mode == 0 ? n : mode == 1 ? n % inner : 0; }

TEST(Masks, CompareF32MatchesEveryOpAndBroadcast) {
  Rng rng(54);
  for (int it = 0; it < 300; ++it) {
    CompareParams p{};
    p.in2_mode = it % 3;
    p.op = rng.uniform_int(kCompareEq, kCompareGe);
    p.outer = rng.uniform_int(1, 6);
    p.inner = rng.uniform_int(1, 9);
    const int32_t n = p.outer * p.inner;
    // Small integers, so that ties (eq, le, ge) occur often.
    std::vector<float> a(static_cast<size_t>(n)), b(static_cast<size_t>(p.in2_mode == 0 ? n : p.in2_mode == 1 ? p.inner : 1));
    for (auto& v : a) v = float(rng.uniform_int(-3, 3)) * 0.5f;
    for (auto& v : b) v = float(rng.uniform_int(-3, 3)) * 0.5f;
    std::vector<int8_t> mask(size_t(n), 7);
    compare_f32(p, a.data(), b.data(), mask.data());
    for (int32_t i = 0; i < n; ++i)
      ASSERT_EQ(mask[size_t(i)], compare_ref(p.op, a[size_t(i)], b[size_t(second_index(p.in2_mode, i, p.inner))]))
          << "op " << p.op << " element " << i;
  }
}

// The int8 comparison against the comparison of the real values in double (exact: an int8
// difference times a float32 scale has at most 33 significant bits), over scales in small
// ratios with values near their zero points, so that they tie often (1 * 0.375 == 3 * 0.125),
// scales one float apart (where rescaling both to a common scale would round distinct values
// together), scales far apart (the clamped shift) and random ones.
float tie_prone_scale(Rng& rng) { return std::ldexp(float(2 * rng.uniform_int(0, 7) + 1), -rng.uniform_int(3, 9)); }

std::vector<int8_t> near(Rng& rng, size_t n, int32_t zero_point) {
  std::vector<int8_t> q(n);
  for (auto& v : q) v = int8_t(std::clamp(zero_point + rng.uniform_int(-6, 6), -128, 127));
  return q;
}

TEST(Masks, CompareS8IsTheExactComparisonOfTheRealValues) {
  Rng rng(55);
  int ties = 0;
  for (int it = 0; it < 800; ++it) {
    CompareParams p{};
    p.in2_mode = it % 3;
    p.op = rng.uniform_int(kCompareEq, kCompareGe);
    p.outer = rng.uniform_int(1, 6);
    p.inner = rng.uniform_int(1, 9);
    const int scales = it / 3 % 4;
    float s1 = 0, s2 = 0;
    switch (scales) {
      case 0: s1 = tie_prone_scale(rng), s2 = s1 * std::array<float, 5>{1, 2, 3, 0.5f, 1.5f}[size_t(rng.uniform_int(0, 4))]; break;
      case 1: s1 = float(random_act_quant(rng).scale), s2 = std::nextafter(s1, 1.0f); break;
      case 2: s1 = float(rng.log_uniform(1e-6, 1e-5)), s2 = float(rng.log_uniform(10, 100)); break;
      default: s1 = float(random_act_quant(rng).scale), s2 = float(random_act_quant(rng).scale); break;
    }
    if (it % 2) std::swap(s1, s2);
    const int32_t z1 = rng.uniform_int(-128, 127), z2 = rng.uniform_int(-128, 127);
    const int32_t n = p.outer * p.inner;
    const size_t n2 = size_t(p.in2_mode == 0 ? n : p.in2_mode == 1 ? p.inner : 1);
    const bool tie_prone = scales == 0;
    const auto a = tie_prone ? near(rng, size_t(n), z1) : rng.int8s(size_t(n));
    const auto b = tie_prone ? near(rng, n2, z2) : rng.int8s(n2);
    p.input1_offset = -z1;
    p.input2_offset = -z2;
    mcuflow::compiler::set_compare_rescale(p, s1, s2);
    std::vector<int8_t> mask(size_t(n), 7);
    compare_s8(p, a.data(), b.data(), mask.data());
    for (int32_t i = 0; i < n; ++i) {
      const double x = double(s1) * (a[size_t(i)] - z1);
      const double y = double(s2) * (b[size_t(second_index(p.in2_mode, i, p.inner))] - z2);
      ties += x == y;
      ASSERT_EQ(mask[size_t(i)], compare_ref(p.op, x, y)) << "op " << p.op << " x " << x << " y " << y;
    }
  }
  EXPECT_GT(ties, 50);
}

// One float apart, 1 * s and 1 * nextafter(s) differ by 2^-24 of their size: distinct, and
// ordered so, for every op.
TEST(Masks, CompareS8SeparatesScalesOneFloatApart) {
  const float s1 = 0.1f, s2 = std::nextafter(0.1f, 1.0f);
  for (int32_t op = kCompareEq; op <= kCompareGe; ++op) {
    CompareParams p{1, 1, 0, op, 0, 0};
    mcuflow::compiler::set_compare_rescale(p, s1, s2);
    const int8_t one = 1;
    int8_t mask = 7;
    compare_s8(p, &one, &one, &mask);
    EXPECT_EQ(mask, compare_ref(op, double(s1), double(s2))) << "op " << op;
  }
}

TEST(Masks, WhereF32PicksByTheMask) {
  Rng rng(56);
  for (int it = 0; it < 100; ++it) {
    WhereParams p{};
    p.count = rng.uniform_int(1, 40);
    p.mask_single = it % 5 == 0;
    p.a_single = it % 3 == 1;
    p.b_single = it % 3 == 2;
    const auto mask = rng.int8s(size_t(p.mask_single ? 1 : p.count), 0, 1);
    const auto a = rng.floats(size_t(p.a_single ? 1 : p.count), -5, 5);
    const auto b = rng.floats(size_t(p.b_single ? 1 : p.count), -5, 5);
    std::vector<float> out(size_t(p.count));
    where_f32(p, mask.data(), a.data(), b.data(), out.data());
    for (int32_t i = 0; i < p.count; ++i) {
      const float want = mask[size_t(p.mask_single ? 0 : i)] ? a[size_t(p.a_single ? 0 : i)] : b[size_t(p.b_single ? 0 : i)];
      ASSERT_EQ(out[size_t(i)], want);
    }
  }
}

// The chosen value requantized to the output: within one step of the ideal rounding, exact when
// the input shares the output's quantization.
TEST(Masks, WhereS8RequantizesThePickedValue) {
  Rng rng(57);
  int exact_cases = 0;
  for (int it = 0; it < 300; ++it) {
    WhereParams p{};
    p.count = rng.uniform_int(1, 40);
    p.mask_single = it % 5 == 0;
    p.a_single = it % 3 == 1;
    p.b_single = it % 3 == 2;
    const Quant qa = random_act_quant(rng), qb = random_act_quant(rng);
    const Quant qo = it % 4 == 0 ? qa : random_act_quant(rng);
    const auto ma = quantize_multiplier(qa.scale / qo.scale), mb = quantize_multiplier(qb.scale / qo.scale);
    p.a_offset = -qa.zp;
    p.a_multiplier = ma.multiplier;
    p.a_shift = ma.shift;
    p.b_offset = -qb.zp;
    p.b_multiplier = mb.multiplier;
    p.b_shift = mb.shift;
    p.output_offset = qo.zp;
    const auto mask = rng.int8s(size_t(p.mask_single ? 1 : p.count), 0, 1);
    const auto a = rng.int8s(size_t(p.a_single ? 1 : p.count));
    const auto b = rng.int8s(size_t(p.b_single ? 1 : p.count));
    std::vector<int8_t> out(size_t(p.count));
    where_s8(p, mask.data(), a.data(), b.data(), out.data());
    for (int32_t i = 0; i < p.count; ++i) {
      const bool pick_a = mask[size_t(p.mask_single ? 0 : i)] != 0;
      const int8_t q = pick_a ? a[size_t(p.a_single ? 0 : i)] : b[size_t(p.b_single ? 0 : i)];
      const Quant& in = pick_a ? qa : qb;
      const int32_t ideal = quantize_ref(in.scale * (q - in.zp), qo.scale, qo.zp);
      if (it % 4 == 0 && pick_a) {
        ++exact_cases;
        ASSERT_EQ(out[size_t(i)], q);
      } else {
        ASSERT_LE(std::abs(out[size_t(i)] - ideal), 1) << "q " << int(q);
      }
    }
  }
  EXPECT_GT(exact_cases, 100);
}

TEST(Masks, GatherRowsCopiesTheRowsOfTheIds) {
  const int32_t rows = 5, row_bytes = 12;
  std::vector<uint8_t> table(size_t(rows * row_bytes));
  for (size_t i = 0; i < table.size(); ++i) table[i] = uint8_t(i * 7 + 3);
  const std::vector<int32_t> ids = {4, 0, 0, 2, 4, 1};
  std::vector<uint8_t> out(ids.size() * row_bytes, 0xEE);
  const GatherRowsParams p{int32_t(ids.size()), rows, row_bytes};
  ASSERT_TRUE(gather_rows(p, ids.data(), table.data(), out.data()));
  for (size_t i = 0; i < ids.size(); ++i)
    EXPECT_EQ(std::memcmp(out.data() + i * row_bytes, table.data() + size_t(ids[i]) * row_bytes, row_bytes), 0);
}

TEST(Masks, GatherRowsRefusesAnIdOutsideTheTableAndWritesNothing) {
  const int32_t rows = 3, row_bytes = 4;
  const std::vector<uint8_t> table(size_t(rows * row_bytes), 9);
  for (const int32_t bad : {-1, 3, INT32_MIN, INT32_MAX}) {
    const std::vector<int32_t> ids = {0, 2, bad, 1};
    std::vector<uint8_t> out(ids.size() * row_bytes, 0xEE);
    ASSERT_FALSE(gather_rows(GatherRowsParams{int32_t(ids.size()), rows, row_bytes}, ids.data(), table.data(), out.data()))
        << bad;
    for (uint8_t v : out) ASSERT_EQ(v, 0xEE);
  }
}

}  // namespace
