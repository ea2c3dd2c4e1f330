// The scalar tier's arithmetic (kernels_scalar.h) against plain integer math: its requantization
// without a 64-bit product, from a channel's prepared words, against the reference's
// multiply_by_quantized_multiplier (arith.h) over the boundaries of every 16-bit half of x and of
// the multiplier, every shift the verifier allows and random values; and the GEMM kernels'
// packed weight words, consumed as the kernels' loop does (two window positions per packed sum,
// split into its halves), against direct dot products.
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "mcuflow/kernels/kernels_scalar.h"

namespace mcuflow::kernels {
namespace {

std::vector<int32_t> edge_values(bool non_negative) {
  std::vector<int32_t> v;
  for (int64_t hi : {-32768, -32767, -16385, -16384, -2, -1, 0, 1, 2, 16383, 16384, 32766, 32767}) {
    if (non_negative && hi < 0) continue;
    for (int64_t lo : {0, 1, 2, 0x3FFF, 0x4000, 0x7FFF, 0x8000, 0x8001, 0xBFFF, 0xC000, 0xFFFE, 0xFFFF})
      v.push_back(int32_t(uint32_t(hi * 65536 + lo)));
  }
  return v;
}

TEST(ScalarRequantize, HighMultiplyEqualsTheReferenceOnEveryHalfWordBoundary) {
  const auto xs = edge_values(false), ms = edge_values(true);
  for (int32_t x : xs)
    for (int32_t m : ms)
      ASSERT_EQ(scalar_doubling_high_mul(x, uint32_t(m) >> 16, uint32_t(m) & 0xFFFFu), sat_rounding_doubling_high_mul(x, m))
          << x << " " << m;
}

TEST(ScalarRequantize, EqualsTheReferenceForRandomValuesAndEveryShift) {
  std::mt19937 rng(7);
  std::uniform_int_distribution<int32_t> any(INT32_MIN, INT32_MAX), multiplier(0, INT32_MAX),
      q31(1 << 30, INT32_MAX), small(-(1 << 20), 1 << 20);
  const auto edges = edge_values(false);
  for (int32_t shift = -31; shift <= 30; ++shift) {
    for (int i = 0; i < 40000; ++i) {
      const int32_t x = i % 4 == 0 ? edges[size_t(i / 4) % edges.size()] : i % 4 == 1 ? small(rng) : any(rng);
      const int32_t m = i % 2 ? q31(rng) : multiplier(rng);
      int32_t words[kScalarRequantWords];
      for (int32_t j = 0; j < kScalarRequantWords; ++j) words[j] = scalar_requant_word(m, shift, j);
      ASSERT_EQ(scalar_requantize(x, words), multiply_by_quantized_multiplier(x, m, shift))
          << x << " " << m << " " << shift;
    }
  }
}

// a[0..3] += one packed sum's halves: a[lo] the sign-extended low half, a[lo + 1] the rest.
void split(uint32_t sum, int32_t* a) {
  const int32_t low = int16_t(sum & 0xFFFFu);
  a[0] += low;
  a[1] += int32_t(sum - uint32_t(low)) >> 16;
}

TEST(ScalarGemm, PackedWeightWordsGiveTheDotProducts) {
  std::mt19937 rng(11);
  std::uniform_int_distribution<int32_t> weight(-127, 127), input(-128, 127);
  for (int32_t out_c = 1; out_c <= 9; ++out_c) {
    for (int32_t depth = 1; depth <= 21; ++depth) {
      std::vector<int8_t> w(static_cast<size_t>(out_c * depth)), x(static_cast<size_t>(depth));
      for (auto& v : w) v = int8_t(weight(rng));
      for (auto& v : x) v = int8_t(input(rng));
      w[0] = -127, x[0] = -128;  // the largest products
      for (int32_t g = 0; g < scalar_groups(out_c); ++g) {
        std::vector<int32_t> words(static_cast<size_t>(2 * depth));
        for (int32_t j = 0; j < 2 * depth; ++j) words[size_t(j)] = scalar_group_weight_word(w.data(), out_c, depth, g, j);
        const int32_t* p = words.data();
        int32_t a[kScalarGroup] = {0, 0, 0, 0};
        int32_t k = 0;
        for (; k + 1 < depth; k += 2, p += 4) {
          split(uint32_t(x[k]) * uint32_t(p[0]) + uint32_t(x[k + 1]) * uint32_t(p[2]), a);
          split(uint32_t(x[k]) * uint32_t(p[1]) + uint32_t(x[k + 1]) * uint32_t(p[3]), a + 2);
        }
        if (depth & 1) {
          split(uint32_t(x[k]) * uint32_t(p[0]), a);
          split(uint32_t(x[k]) * uint32_t(p[1]), a + 2);
        }
        for (int32_t lane = 0; lane < kScalarGroup && g * kScalarGroup + lane < out_c; ++lane) {
          const int32_t oc = g * kScalarGroup + lane;
          int32_t expected = 0;
          for (int32_t i = 0; i < depth; ++i) expected += x[size_t(i)] * w[size_t(oc * depth + i)];
          ASSERT_EQ(a[lane], expected) << "out_c " << out_c << " depth " << depth << " channel " << oc;
        }
      }
    }
  }
}

}  // namespace
}  // namespace mcuflow::kernels
