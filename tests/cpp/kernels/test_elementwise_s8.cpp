// clamp_s8, requantize_s8, concat_slice_s8, permute_b8/permute_b32, quantize_f32_s8 and
// dequantize_s8_f32.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "mcuflow/compiler/quant_math.h"
#include "mcuflow/kernels/kernels.h"
#include "test_util.h"

using namespace mcuflow::kernels;
using namespace mcuflow::test;

TEST(ClampS8, ExactAndInPlace) {
  Rng rng(7001);
  for (int i = 0; i < 100; ++i) {
    const int32_t n = rng.uniform_int(1, 200);
    int32_t lo = rng.uniform_int(-128, 127), hi = rng.uniform_int(-128, 127);
    if (lo > hi) std::swap(lo, hi);
    const ClampParams p{n, lo, hi, 0.0f, 0.0f};
    auto buf = rng.int8s(static_cast<size_t>(n));
    const auto orig = buf;
    std::vector<int8_t> out(buf.size());
    clamp_s8(p, buf.data(), out.data());
    clamp_s8(p, buf.data(), buf.data());  // in place
    for (int32_t k = 0; k < n; ++k) {
      ASSERT_EQ(out[k], clampi(orig[k], lo, hi));
      ASSERT_EQ(buf[k], out[k]);
    }
  }
}

TEST(RequantizeS8, RandomWithinOneStepOfDoubleAndInPlace) {
  Rng rng(7002);
  size_t exact = 0, total = 0;
  int positive_shift = 0;
  for (int i = 0; i < 500; ++i) {
    const int32_t n = rng.uniform_int(1, 300);
    const Quant in = random_act_quant(rng);
    const Quant out{in.scale * rng.log_uniform(0.1, 10.0), rng.uniform_int(-128, 127)};
    const ActRange act = random_act(rng, out);
    const auto qm = mcuflow::compiler::quantize_multiplier(in.scale / out.scale);
    positive_shift += qm.shift > 0;
    const RequantizeParams p{n, -in.zp, out.zp, qm.multiplier, qm.shift, act.lo, act.hi};
    auto buf = rng.int8s(static_cast<size_t>(n));
    std::vector<int32_t> want;
    for (int8_t v : buf) want.push_back(quantize_ref((v - in.zp) * in.scale, out.scale, out.zp, act.lo, act.hi));
    std::vector<int8_t> got(buf.size());
    requantize_s8(p, buf.data(), got.data());
    requantize_s8(p, buf.data(), buf.data());  // in place
    ASSERT_EQ(buf, got);
    const Diff d = diff_int8(got, want);
    ASSERT_LE(d.max_abs, 1) << "case " << i;
    exact += d.exact;
    total += d.total;
  }
  EXPECT_GT(positive_shift, 50);
  // Multipliers near 1 leave few fractional bits after the high multiply, so double rounding
  // misses ties more often than in conv (still at most one step).
  EXPECT_GT(static_cast<double>(exact) / total, 0.95);
}

TEST(RequantizeS8, IdentityIsExact) {
  const auto qm = mcuflow::compiler::quantize_multiplier(1.0);
  const RequantizeParams p{256, 0, 0, qm.multiplier, qm.shift, -128, 127};
  std::vector<int8_t> in(256), out(256);
  for (int i = 0; i < 256; ++i) in[i] = static_cast<int8_t>(i - 128);
  requantize_s8(p, in.data(), out.data());
  EXPECT_EQ(in, out);
}

TEST(ConcatSliceS8, CopiesIntoItsSliceOnly) {
  Rng rng(7003);
  for (int i = 0; i < 100; ++i) {
    const int32_t outer = rng.uniform_int(1, 20), in_c = rng.uniform_int(1, 9);
    const int32_t offset = rng.uniform_int(0, 5), out_c = offset + in_c + rng.uniform_int(0, 5);
    const ConcatSliceParams p{outer, in_c, out_c, offset, 0, 0, 0, 0, 0};
    const auto in = rng.int8s(static_cast<size_t>(outer * in_c));
    std::vector<int8_t> out(static_cast<size_t>(outer * out_c), 77);
    concat_slice_s8(p, in.data(), out.data());
    for (int32_t o = 0; o < outer; ++o)
      for (int32_t c = 0; c < out_c; ++c) {
        const bool inside = c >= offset && c < offset + in_c;
        ASSERT_EQ(out[o * out_c + c], inside ? in[o * in_c + c - offset] : 77);
      }
  }
}

TEST(ConcatSliceS8, RequantizesWithinOneStep) {
  Rng rng(7004);
  for (int i = 0; i < 200; ++i) {
    const int32_t outer = rng.uniform_int(1, 10), in_c = rng.uniform_int(1, 7), offset = rng.uniform_int(0, 3);
    const int32_t out_c = offset + in_c + rng.uniform_int(0, 3);
    const Quant qi = random_act_quant(rng);
    const Quant qo{qi.scale * rng.log_uniform(0.3, 3.0), rng.uniform_int(-128, 127)};
    const auto qm = mcuflow::compiler::quantize_multiplier(qi.scale / qo.scale);
    const ConcatSliceParams p{outer, in_c, out_c, offset, 1, -qi.zp, qo.zp, qm.multiplier, qm.shift};
    const auto in = rng.int8s(static_cast<size_t>(outer * in_c));
    std::vector<int8_t> out(static_cast<size_t>(outer * out_c), 55);
    concat_slice_s8(p, in.data(), out.data());
    for (int32_t o = 0; o < outer; ++o)
      for (int32_t c = 0; c < out_c; ++c) {
        const int8_t got = out[o * out_c + c];
        if (c < offset || c >= offset + in_c) {
          ASSERT_EQ(got, 55);
          continue;
        }
        const int32_t want = quantize_ref((in[o * in_c + c - offset] - qi.zp) * qi.scale, qo.scale, qo.zp);
        ASSERT_LE(std::abs(got - want), 1);
      }
  }
}

namespace {
constexpr int kRank = int(kMaxRank);

// Every permutation of kMaxRank dims, each checked by scattering from input coordinates.
template <typename T, typename Fn>
void check_all_permutations(Rng& rng, Fn permute) {
  int perm[kRank];
  for (int k = 0; k < kRank; ++k) perm[k] = k;
  do {
    PermuteParams p{};
    int32_t n = 1;
    for (int k = 0; k < kRank; ++k) {
      p.in_dims[k] = rng.uniform_int(1, 3);
      p.perm[k] = perm[k];
      n *= p.in_dims[k];
    }
    std::vector<T> in(static_cast<size_t>(n)), out(static_cast<size_t>(n)), want(static_cast<size_t>(n));
    for (int32_t i = 0; i < n; ++i) in[i] = static_cast<T>(rng.uniform_int(-100000, 100000));
    for (int32_t src = 0; src < n; ++src) {
      int32_t j[kRank];  // the input coordinates of element src
      for (int k = kRank - 1, rest = src; k >= 0; --k) {
        j[k] = rest % p.in_dims[k];
        rest /= p.in_dims[k];
      }
      int32_t o = 0;  // output coordinate k is input coordinate perm[k]
      for (int k = 0; k < kRank; ++k) o = o * p.in_dims[perm[k]] + j[perm[k]];
      want[o] = in[src];
    }
    permute(p, in.data(), out.data());
    ASSERT_EQ(out, want) << ::testing::PrintToString(std::vector<int>(perm, perm + kRank));
  } while (std::next_permutation(perm, perm + kRank));
}
}  // namespace

TEST(PermuteB8, AllPermutations) {
  Rng rng(7005);
  check_all_permutations<int8_t>(rng, [](const PermuteParams& p, const int8_t* in, int8_t* out) { permute_b8(p, in, out); });
}

TEST(PermuteB32, AllPermutations) {
  Rng rng(7006);
  check_all_permutations<int32_t>(rng, [](const PermuteParams& p, const int32_t* in, int32_t* out) { permute_b32(p, in, out); });
}

TEST(PermuteB8, NchwToNhwc) {
  // [1][2][2][3] (N, C, H, W) -> perm {0, 2, 3, 1} -> [1][2][3][2] (N, H, W, C), after two
  // leading size-1 dims.
  static_assert(kMaxRank == 6, "the params below list 6 dims");
  const PermuteParams p{{1, 1, 1, 2, 2, 3}, {0, 1, 2, 4, 5, 3}};
  int8_t in[12];
  for (int i = 0; i < 12; ++i) in[i] = static_cast<int8_t>(i);  // c * 6 + h * 3 + w
  int8_t out[12];
  permute_b8(p, in, out);
  const int8_t want[12] = {0, 6, 1, 7, 2, 8, 3, 9, 4, 10, 5, 11};
  for (int i = 0; i < 12; ++i) EXPECT_EQ(out[i], want[i]) << i;
}

TEST(QuantizeF32S8, TiesRoundAwayFromZero) {
  const QuantizeParams p{8, 0.5f, 3};
  const float in[8] = {1.25f, -1.25f, 0.25f, -0.25f, 0.0f, 100.0f, -100.0f, 0.74f};
  int8_t out[8];
  quantize_f32_s8(p, in, out);
  const int8_t want[8] = {6, 0, 4, 2, 3, 127, -128, 4};  // 2.5->3, -2.5->-3, 0.5->1, -0.5->-1, ..., 1.48->1
  for (int i = 0; i < 8; ++i) EXPECT_EQ(out[i], want[i]) << i;
}

TEST(QuantizeF32S8, RandomMatchesFloat32FormulaAndDouble) {
  Rng rng(7007);
  for (int i = 0; i < 300; ++i) {
    const int32_t n = rng.uniform_int(1, 100);
    const float scale = static_cast<float>(rng.log_uniform(0.001, 1.0));
    const int32_t zp = rng.uniform_int(-128, 127);
    const auto x = rng.floats(static_cast<size_t>(n), -200.0 * scale, 200.0 * scale);
    const QuantizeParams p{n, scale, zp};
    std::vector<int8_t> out(x.size());
    quantize_f32_s8(p, x.data(), out.data());
    for (int32_t k = 0; k < n; ++k) {
      // The float32 definition, exactly.
      const float qf = std::round(x[k] / scale) + static_cast<float>(zp);
      ASSERT_EQ(out[k], static_cast<int32_t>(std::fmin(127.0f, std::fmax(-128.0f, qf))));
      // And within one step of the double computation.
      ASSERT_LE(std::abs(out[k] - quantize_ref(x[k], scale, zp)), 1);
    }
  }
}

TEST(QuantizeF32S8, NonFiniteInputsStayInRange) {
  const QuantizeParams p{3, 0.1f, 0};
  const float in[3] = {INFINITY, -INFINITY, NAN};
  int8_t out[3];
  quantize_f32_s8(p, in, out);
  EXPECT_EQ(out[0], 127);
  EXPECT_EQ(out[1], -128);
  EXPECT_EQ(out[2], -128);
}

TEST(DequantizeS8F32, ExactlyTheRoundedProduct) {
  Rng rng(7008);
  for (int i = 0; i < 200; ++i) {
    const float scale = static_cast<float>(rng.log_uniform(1e-4, 10.0));
    const int32_t zp = rng.uniform_int(-128, 127);
    std::vector<int8_t> q(256);
    for (int k = 0; k < 256; ++k) q[k] = static_cast<int8_t>(k - 128);
    std::vector<float> out(256);
    const QuantizeParams p{256, scale, zp};
    dequantize_s8_f32(p, q.data(), out.data());
    for (int k = 0; k < 256; ++k) {
      // scale * (q - zp) is exact in double; the kernel must return it rounded once to float.
      ASSERT_EQ(out[k], static_cast<float>(static_cast<double>(scale) * (q[k] - zp)));
    }
  }
}

TEST(QuantizeRoundTrip, DequantizeThenQuantizeIsIdentity) {
  const QuantizeParams p{256, 0.0371f, -17};
  std::vector<int8_t> q(256), back(256);
  for (int k = 0; k < 256; ++k) q[k] = static_cast<int8_t>(k - 128);
  std::vector<float> f(256);
  dequantize_s8_f32(p, q.data(), f.data());
  quantize_f32_s8(p, f.data(), back.data());
  EXPECT_EQ(q, back);
}
