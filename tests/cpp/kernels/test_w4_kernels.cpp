// The packed int4 weight kernels (W4A8) against the int8 kernels on the same weights unpacked:
// unpacking is exact, so every output must be bit-identical, on random shapes (odd weight counts
// and rows starting at a high nibble included), every nibble value from -8 to 7, per-channel
// multipliers, biases at the accumulator's scale, input and output offsets and fused clamps.
#include <gtest/gtest.h>

#include "mcuflow/kernels/kernels.h"
#include "test_util.h"

using namespace mcuflow::kernels;
using namespace mcuflow::test;

namespace {

// Weights in [-8, 7], and the same values packed two a byte, the first in the low nibble.
struct Int4Weights {
  std::vector<int8_t> unpacked;
  std::vector<uint8_t> packed;
};

Int4Weights random_int4(Rng& rng, size_t n) {
  Int4Weights w;
  w.unpacked = rng.int8s(n, -8, 7);
  w.packed.assign((n + 1) / 2, 0);
  for (size_t i = 0; i < n; ++i) w.packed[i / 2] |= uint8_t((w.unpacked[i] & 0xF) << (i % 2 * 4));
  return w;
}

// Per-channel requantization, biases and an output stage for `channels` outputs.
struct Stage {
  std::vector<int32_t> bias, mult, shift;
  OutputStage out;
  int32_t input_offset;
};

Stage random_stage(Rng& rng, int32_t channels) {
  Stage s;
  s.bias.resize(size_t(channels));
  for (auto& b : s.bias) b = rng.uniform_int(-20000, 20000);
  std::vector<double> real(static_cast<size_t>(channels));
  for (auto& r : real) r = rng.log_uniform(0.0005, 0.5);
  multipliers_for(real, s.mult, s.shift);
  const int32_t zp = rng.uniform_int(-128, 127);
  const int32_t lo = rng.uniform_int(0, 1) ? -128 : zp;
  s.out = {zp, lo, rng.uniform_int(lo, 127)};
  s.input_offset = rng.uniform_int(-127, 128);
  return s;
}

}  // namespace

TEST(W4Kernels, PackedNibblesReadAsTheirValues) {
  // Byte 0x8F holds -1 (low nibble, the first element) then -8; 0x70 holds 0 then 7. An fc of
  // one input of value 1 into four outputs (weights [4][1]) at a requantization of x 1 (2^30
  // doubled once) outputs the weights.
  const uint8_t packed[] = {0x8F, 0x70};
  const int8_t input[] = {1};
  const int32_t mult[] = {1 << 30}, shift[] = {1};
  const FcParams p{1, 1, 4, 0, 0, {0, -128, 127}, 0.0f, 0.0f};
  int8_t out[4];
  fc_s8_w4(p, input, packed, nullptr, mult, shift, out);
  EXPECT_EQ(out[0], -1);
  EXPECT_EQ(out[1], -8);
  EXPECT_EQ(out[2], 0);
  EXPECT_EQ(out[3], 7);
}

TEST(W4Kernels, FcEqualsFcS8OnTheUnpackedWeights) {
  Rng rng(4401);
  for (int iter = 0; iter < 300; ++iter) {
    FcParams p{};
    p.rows = rng.uniform_int(1, 3);
    p.in_c = rng.uniform_int(1, 67);
    p.out_c = rng.uniform_int(1, 19);
    p.per_channel = rng.uniform_int(0, 1);
    const Stage s = random_stage(rng, p.out_c);
    p.input_offset = s.input_offset;
    p.out = s.out;
    const Int4Weights w = random_int4(rng, size_t(p.in_c) * p.out_c);
    const std::vector<int8_t> input = rng.int8s(size_t(p.rows) * p.in_c);
    std::vector<int8_t> want(size_t(p.rows) * p.out_c), got(want.size());
    const int32_t* bias = rng.uniform_int(0, 4) ? s.bias.data() : nullptr;
    fc_s8(p, input.data(), w.unpacked.data(), bias, s.mult.data(), s.shift.data(), want.data());
    fc_s8_w4(p, input.data(), w.packed.data(), bias, s.mult.data(), s.shift.data(), got.data());
    ASSERT_EQ(got, want) << "iteration " << iter << ": rows " << p.rows << " in_c " << p.in_c << " out_c " << p.out_c;
  }
}

TEST(W4Kernels, ConvEqualsConvS8OnTheUnpackedWeights) {
  Rng rng(4402);
  for (int iter = 0; iter < 300; ++iter) {
    const bool pointwise = iter % 3 == 0;
    Geometry g = random_geometry(rng, true);
    if (pointwise) {  // 1x1, stride 1, no padding: the pointwise layers
      g.k_h = g.k_w = g.stride_h = g.stride_w = g.dil_h = g.dil_w = 1;
      g.pad_top = g.pad_left = 0;
      g.out_h = g.in_h;
      g.out_w = g.in_w;
    }
    const int32_t groups = iter % 4 == 1 ? rng.uniform_int(2, 3) : 1;
    const int32_t in_c = groups * rng.uniform_int(1, 9), out_c = groups * rng.uniform_int(1, 7);
    const Stage s = random_stage(rng, out_c);
    const ConvParams p{g.in_h,  g.in_w,     in_c,       g.out_h,    g.out_w,  out_c,   g.k_h,
                       g.k_w,   g.stride_h, g.stride_w, g.pad_top,  g.pad_left, g.dil_h, g.dil_w,
                       s.input_offset, s.out, 0.0f, 0.0f, groups};
    const Int4Weights w = random_int4(rng, size_t(out_c) * g.k_h * g.k_w * (in_c / groups));
    const std::vector<int8_t> input = rng.int8s(size_t(g.in_h) * g.in_w * in_c);
    std::vector<int8_t> want(size_t(g.out_h) * g.out_w * out_c), got(want.size());
    conv_s8(p, input.data(), w.unpacked.data(), s.bias.data(), s.mult.data(), s.shift.data(), want.data());
    conv_s8_w4(p, input.data(), w.packed.data(), s.bias.data(), s.mult.data(), s.shift.data(), got.data());
    ASSERT_EQ(got, want) << "iteration " << iter << ": " << g.in_h << "x" << g.in_w << "x" << in_c << " k " << g.k_h
                         << "x" << g.k_w << " -> " << out_c << " groups " << groups;
  }
}

TEST(W4Kernels, DepthwiseEqualsDwconvS8OnTheUnpackedWeights) {
  Rng rng(4403);
  for (int iter = 0; iter < 300; ++iter) {
    const Geometry g = random_geometry(rng, true);
    const int32_t in_c = rng.uniform_int(1, 21), ch_mult = rng.uniform_int(1, 3), out_c = in_c * ch_mult;
    const Stage s = random_stage(rng, out_c);
    DwConvParams p{};
    p.in_h = g.in_h; p.in_w = g.in_w; p.in_c = in_c;
    p.out_h = g.out_h; p.out_w = g.out_w; p.out_c = out_c;
    p.ch_mult = ch_mult;
    p.k_h = g.k_h; p.k_w = g.k_w;
    p.stride_h = g.stride_h; p.stride_w = g.stride_w;
    p.pad_top = g.pad_top; p.pad_left = g.pad_left;
    p.dil_h = g.dil_h; p.dil_w = g.dil_w;
    p.input_offset = s.input_offset;
    p.out = s.out;
    const Int4Weights w = random_int4(rng, size_t(g.k_h) * g.k_w * out_c);
    const std::vector<int8_t> input = rng.int8s(size_t(g.in_h) * g.in_w * in_c);
    std::vector<int8_t> want(size_t(g.out_h) * g.out_w * out_c), got(want.size());
    dwconv_s8(p, input.data(), w.unpacked.data(), s.bias.data(), s.mult.data(), s.shift.data(), want.data());
    dwconv_s8_w4(p, input.data(), w.packed.data(), s.bias.data(), s.mult.data(), s.shift.data(), got.data());
    ASSERT_EQ(got, want) << "iteration " << iter << ": " << g.in_h << "x" << g.in_w << "x" << in_c << " x" << ch_mult
                         << " k " << g.k_h << "x" << g.k_w;
  }
}
