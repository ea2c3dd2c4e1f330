// The scalar tier's requantization without a 64-bit product, from a channel's prepared words
// (kernels_scalar.h), against the reference's multiply_by_quantized_multiplier (arith.h): the
// boundaries of every 16-bit half of x and of the multiplier, every shift the verifier allows,
// and random values.
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
      const int32_t words[kScalarRequantWords] = {scalar_requant_word(m, shift, 0), scalar_requant_word(m, shift, 1),
                                                  scalar_requant_word(m, shift, 2), scalar_requant_word(m, shift, 3)};
      ASSERT_EQ(scalar_requantize(x, words), multiply_by_quantized_multiplier(x, m, shift))
          << x << " " << m << " " << shift;
    }
  }
}

}  // namespace
}  // namespace mcuflow::kernels
