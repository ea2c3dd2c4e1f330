// strided_copy_b8 / strided_copy_b32 against a direct evaluation of their rule: output element
// o reads input element start + floor(o * num / den) per dim, or the fill outside the input.
#include <gtest/gtest.h>

#include <cstring>

#include "mcuflow/kernels/kernels.h"
#include "test_util.h"

using namespace mcuflow::kernels;
using namespace mcuflow::test;

namespace {

constexpr int kRank = int(kMaxRank);

StridedCopyParams random_params(Rng& rng) {
  StridedCopyParams p{};
  for (int d = 0; d < kRank; ++d) {
    p.in_dims[d] = rng.uniform_int(1, 4);
    p.out_dims[d] = rng.uniform_int(1, 4);
    p.num[d] = rng.uniform_int(0, 3);
    p.den[d] = rng.uniform_int(1, 3);
    p.start[d] = rng.uniform_int(-3, 3);
  }
  p.fill = rng.uniform_int(-128, 127);
  return p;
}

// The element of the input an output index reads, or -1 for the fill (plain integer math).
int64_t source_of(const StridedCopyParams& p, const int32_t o[kRank]) {
  int64_t index = 0;
  for (int d = 0; d < kRank; ++d) {
    const int64_t src = p.start[d] + int64_t(o[d]) * p.num[d] / p.den[d];
    if (src < 0 || src >= p.in_dims[d]) return -1;
    index = index * p.in_dims[d] + src;
  }
  return index;
}

template <typename T, typename Kernel>
void check_random(uint32_t seed, Kernel kernel) {
  Rng rng(seed);
  for (int it = 0; it < 300; ++it) {
    const StridedCopyParams p = random_params(rng);
    size_t in_n = 1, out_n = 1;
    for (int d = 0; d < kRank; ++d) in_n *= size_t(p.in_dims[d]), out_n *= size_t(p.out_dims[d]);
    std::vector<T> in(in_n), out(out_n);
    for (auto& v : in) v = T(rng.uniform_int(-100000, 100000));
    kernel(p, in.data(), out.data());
    T fill;
    if (sizeof(T) == 1) fill = T(p.fill);
    else std::memcpy(&fill, &p.fill, sizeof(T));
    for (size_t n = 0; n < out_n; ++n) {
      int32_t o[kRank];  // the output coordinates of element n
      size_t rest = n;
      for (int d = kRank - 1; d >= 0; --d) {
        o[d] = int32_t(rest % size_t(p.out_dims[d]));
        rest /= size_t(p.out_dims[d]);
      }
      const int64_t src = source_of(p, o);
      ASSERT_EQ(out[n], src < 0 ? fill : in[size_t(src)]) << "case " << it << " element " << n;
    }
  }
}

}  // namespace

TEST(StridedCopy, B8MatchesTheGatherRule) { check_random<int8_t>(9101, strided_copy_b8); }
TEST(StridedCopy, B32MatchesTheGatherRule) { check_random<int32_t>(9102, strided_copy_b32); }

TEST(StridedCopy, PadSliceBroadcastUpsample) {
  // Pad one column left and two right of a 2x3 int8 image (fill 7), then crop, step, repeat.
  const std::vector<int8_t> in = {1, 2, 3, 4, 5, 6};
  static_assert(kMaxRank == 6, "the params below list 6 dims");
  auto run = [&](StridedCopyParams p) {
    std::vector<int8_t> out(size_t(p.out_dims[4]) * p.out_dims[5]);
    strided_copy_b8(p, in.data(), out.data());
    return out;
  };
  StridedCopyParams p{{1, 1, 1, 1, 2, 3}, {1, 1, 1, 1, 2, 6}, {0, 0, 0, 0, 0, -1}, {1, 1, 1, 1, 1, 1}, {1, 1, 1, 1, 1, 1}, 7};
  EXPECT_EQ(run(p), (std::vector<int8_t>{7, 1, 2, 3, 7, 7, 7, 4, 5, 6, 7, 7}));
  p = {{1, 1, 1, 1, 2, 3}, {1, 1, 1, 1, 2, 2}, {0, 0, 0, 0, 0, 0}, {1, 1, 1, 1, 1, 2}, {1, 1, 1, 1, 1, 1}, 0};  // x[..., ::2]
  EXPECT_EQ(run(p), (std::vector<int8_t>{1, 3, 4, 6}));
  p = {{1, 1, 1, 1, 2, 3}, {1, 1, 1, 1, 3, 3}, {0, 0, 0, 0, 1, 0}, {1, 1, 1, 1, 0, 1}, {1, 1, 1, 1, 1, 1}, 0};  // row 1 repeated
  EXPECT_EQ(run(p), (std::vector<int8_t>{4, 5, 6, 4, 5, 6, 4, 5, 6}));
  p = {{1, 1, 1, 1, 2, 3}, {1, 1, 1, 1, 4, 6}, {0, 0, 0, 0, 0, 0}, {1, 1, 1, 1, 1, 1}, {1, 1, 1, 1, 2, 2}, 0};  // nearest x2
  EXPECT_EQ(run(p), (std::vector<int8_t>{1, 1, 2, 2, 3, 3, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 4, 4, 5, 5, 6, 6}));
}
