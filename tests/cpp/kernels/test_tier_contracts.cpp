// Tier kernels' refusals (tier_contract.h, kernels_<tier>.h): the functions the compiler's rules
// and the load-time checks both call, at the limits each kernel's header documents.
#include <gtest/gtest.h>

#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "mcuflow/kernels/kernels_dsp.h"
#include "mcuflow/kernels/kernels_mve.h"
#include "mcuflow/kernels/kernels_scalar.h"

namespace mcuflow::kernels {
namespace {

ConvParams conv(int32_t k, int32_t in_c, int32_t pad = 0) {
  ConvParams p{};
  p.in_h = p.in_w = 8, p.out_h = p.out_w = 8 + 2 * pad - (k - 1);
  p.in_c = in_c, p.out_c = 4, p.k_h = p.k_w = k, p.stride_h = p.stride_w = 1, p.dil_h = p.dil_w = 1;
  p.pad_top = p.pad_left = pad;
  return p;
}

DwConvParams dwconv(int32_t k_h, int32_t k_w) {
  DwConvParams p{};
  p.in_h = p.in_w = 8, p.out_h = 8 - k_h + 1, p.out_w = 8 - k_w + 1, p.in_c = p.out_c = 16, p.ch_mult = 1;
  p.k_h = k_h, p.k_w = k_w, p.stride_h = p.stride_w = 1, p.dil_h = p.dil_w = 1;
  return p;
}

TEST(TierContracts, PointwiseKernelsNeedA1x1WindowInsideTheInput) {
  for (auto refusal :
       {conv_s8_1x1_scalar_refusal, conv_s8_1x1_dsp_refusal, conv_s8_1x1_mve_refusal, conv_s16_1x1_mve_refusal,
        conv_s16_1x1_dsp_refusal}) {
    EXPECT_EQ(refusal(conv(1, 8)), Refusal::kNone);
    EXPECT_EQ(refusal(conv(3, 8)), Refusal::kKernelSize);
    EXPECT_EQ(refusal(conv(1, 8, 1)), Refusal::kPadding);
    ConvParams strided = conv(1, 8);
    strided.stride_w = 2;  // output column 7 would read input column 14 of 8
    EXPECT_EQ(refusal(strided), Refusal::kGridOutsideInput);
    strided.out_w = 4;
    EXPECT_EQ(refusal(strided), Refusal::kNone);
    ConvParams grouped = conv(1, 8);
    grouped.groups = 2;  // the window kernels take grouped 1x1 convs
    EXPECT_EQ(refusal(grouped), Refusal::kGroups);
  }
}

TEST(TierContracts, MvePointwiseScattersToOutputChannelsWithin16BitOffsets) {
  ConvParams wide = conv(1, 2);  // few enough int4 weights for the w4 kernel
  wide.out_c = kMvePointwiseMaxOutC;  // pixel 1's last lane: out_c + 3 = 65535
  EXPECT_EQ(conv_s8_1x1_mve_refusal(wide), Refusal::kNone);
  EXPECT_EQ(conv_s8_w4_1x1_mve_refusal(wide), Refusal::kNone);
  wide.out_c = kMvePointwiseMaxOutC + 1;
  EXPECT_EQ(conv_s8_1x1_mve_refusal(wide), Refusal::kOutputChannels);
}

TEST(TierContracts, GroupedDspWindowsCountOneGroupsChannels) {
  ConvParams grouped = conv(1, 8);
  grouped.groups = 2;
  EXPECT_EQ(conv_s8_dsp_refusal(grouped), Refusal::kNone);  // 4 positions per group
  grouped.groups = 4;
  EXPECT_EQ(conv_s8_dsp_refusal(grouped), Refusal::kWindowDepth);  // 2
  grouped = conv(2, 16384);
  grouped.groups = 2;  // 2 * 2 * 8192 per group
  EXPECT_EQ(conv_s8_dsp_refusal(grouped), Refusal::kNone);
  EXPECT_EQ(conv_s8_mve_refusal(grouped), Refusal::kWindowDepth);  // its rows hold every group
}

TEST(TierContracts, DspWindowsHold4To32768Values) {
  EXPECT_EQ(conv_s8_dsp_refusal(conv(1, 3)), Refusal::kWindowDepth);
  EXPECT_EQ(conv_s8_dsp_refusal(conv(1, 4)), Refusal::kNone);
  EXPECT_EQ(conv_s8_dsp_refusal(conv(2, 8192)), Refusal::kNone);  // 2 * 2 * 8192 = 32768
  EXPECT_EQ(conv_s8_dsp_refusal(conv(2, 8193)), Refusal::kWindowDepth);
  EXPECT_EQ(conv_s8_1x1_dsp_refusal(conv(1, 32769)), Refusal::kInputChannels);
  FcParams fc{};
  fc.in_c = 32768;
  EXPECT_EQ(fc_s8_dsp_refusal(fc), Refusal::kNone);
  fc.in_c = 3;
  EXPECT_EQ(fc_s8_dsp_refusal(fc), Refusal::kInputChannels);
  // A product that would overflow int32 in 32 bits is still refused, not wrapped into range.
  EXPECT_EQ(conv_s8_dsp_refusal(conv(65536, 65536)), Refusal::kWindowDepth);
}

TEST(TierContracts, MveConvWindowsFitHalfADimension) {
  EXPECT_EQ(conv_s8_mve_refusal(conv(2, 8192)), Refusal::kNone);
  EXPECT_EQ(conv_s8_mve_refusal(conv(2, 8193)), Refusal::kWindowDepth);
  EXPECT_EQ(kMveMaxDepth * 2, kMaxDim);
}

TEST(TierContracts, MveInt16ConvGathersAtMost512TapsUngrouped) {
  EXPECT_EQ(conv_s16_mve_refusal(conv(2, 128)), Refusal::kNone);  // 2 * 2 * 128 = 512
  EXPECT_EQ(conv_s16_mve_refusal(conv(2, 129)), Refusal::kWindowDepth);
  EXPECT_EQ(conv_s16_mve_refusal(conv(10, 1, 1)), Refusal::kNone);
  ConvParams grouped = conv(3, 8);
  grouped.groups = 2;
  EXPECT_EQ(conv_s16_mve_refusal(grouped), Refusal::kGroups);
  DwConvParams multiplied = dwconv(3, 3);
  EXPECT_EQ(dwconv_s16_mve_refusal(multiplied), Refusal::kNone);
  multiplied.ch_mult = 2, multiplied.out_c = 32;
  EXPECT_EQ(dwconv_s16_mve_refusal(multiplied), Refusal::kChannelMultiplier);
  PoolParams pool{};
  pool.k_h = 256, pool.k_w = 255;  // 65,280 values of at most 32768: the sum fits int32
  EXPECT_EQ(avgpool_s16_mve_refusal(pool), Refusal::kNone);
  pool.k_w = 256;
  EXPECT_EQ(avgpool_s16_mve_refusal(pool), Refusal::kPoolWindow);
}

TEST(TierContracts, DspInt16KernelsTakeTheInt8WindowsUngrouped) {
  EXPECT_EQ(conv_s16_dsp_refusal(conv(1, 3)), Refusal::kWindowDepth);
  EXPECT_EQ(conv_s16_dsp_refusal(conv(10, 1, 1)), Refusal::kNone);  // DS-CNN's first conv: 10x4 x 1
  EXPECT_EQ(conv_s16_dsp_refusal(conv(2, 8192)), Refusal::kNone);
  EXPECT_EQ(conv_s16_dsp_refusal(conv(2, 8193)), Refusal::kWindowDepth);
  ConvParams grouped = conv(3, 8);
  grouped.groups = 2;
  EXPECT_EQ(conv_s16_dsp_refusal(grouped), Refusal::kGroups);
  EXPECT_EQ(conv_s16_1x1_dsp_refusal(conv(1, 3)), Refusal::kInputChannels);
  FcParams fc{};
  fc.in_c = 4;
  EXPECT_EQ(fc_s16_dsp_refusal(fc), Refusal::kNone);
  fc.in_c = 3;
  EXPECT_EQ(fc_s16_dsp_refusal(fc), Refusal::kInputChannels);
  EXPECT_EQ(dwconv_s16_dsp_refusal(dwconv(5, 5)), Refusal::kNone);
  EXPECT_EQ(dwconv_s16_dsp_refusal(dwconv(5, 6)), Refusal::kTaps);
  DwConvParams multiplied = dwconv(3, 3);
  multiplied.ch_mult = 2, multiplied.out_c = 32;
  EXPECT_EQ(dwconv_s16_dsp_refusal(multiplied), Refusal::kChannelMultiplier);
  PoolParams pool{};
  pool.k_h = 256, pool.k_w = 255;
  EXPECT_EQ(avgpool_s16_dsp_refusal(pool), Refusal::kNone);
  pool.k_w = 256;
  EXPECT_EQ(avgpool_s16_dsp_refusal(pool), Refusal::kPoolWindow);
}

// The int32 path's bound (s16_tiers.h) at its limits: 32768 * 65535 + 32767 = 2^31 - 1.
TEST(TierContracts, Int16AccumulatorBoundStopsBelow2To31) {
  EXPECT_TRUE(s16_accumulator_fits_int32(32767, 65535));
  EXPECT_FALSE(s16_accumulator_fits_int32(32768, 65535));
  EXPECT_FALSE(s16_accumulator_fits_int32(-32768, 65535));
  EXPECT_FALSE(s16_accumulator_fits_int32(0, 65536));
  EXPECT_TRUE(s16_rounding_fits_high_mul(-17));
  EXPECT_TRUE(s16_rounding_fits_high_mul(-1));
  EXPECT_FALSE(s16_rounding_fits_high_mul(-18));
  EXPECT_FALSE(s16_rounding_fits_high_mul(0));
  // The high multiply's factor is q15 << (32 - r): below 2^31 at r = 16, the largest q15.
  EXPECT_EQ(s16_rounding_factor(std::numeric_limits<int32_t>::max(), -1), 32767 << 16);
}

// Where the bounds hold, the rounding high multiply (SMMLAR with the output offset, the DSP
// kernels' output stage; VRMULH on MVE) equals the reference's 64-bit requantization.
TEST(TierContracts, Int16HighMultiplyEqualsTheWideRequantization) {
  uint64_t state = 0x9E3779B97F4A7C15u;
  auto next = [&state] {
    state = state * 6364136223846793005u + 1442695040888963407u;
    return uint32_t(state >> 32);
  };
  for (int i = 0; i < 200000; ++i) {
    const int32_t acc = int32_t(next()), multiplier = int32_t(next() | 0x40000000u) & 0x7FFFFFFF;
    const int32_t shift = -1 - int32_t(next() % 17), offset = int32_t(next() % (1u << 30)) - (1 << 29);
    const int32_t want = int32_t(multiply_by_quantized_multiplier_wide(acc, multiplier, shift)) + offset;
    ASSERT_EQ(smmlar(acc, s16_rounding_factor(multiplier, shift), offset), want)
        << "acc " << acc << " multiplier " << multiplier << " shift " << shift;
  }
}

TEST(TierContracts, DepthwiseKernelsLimitTheirTaps) {
  EXPECT_EQ(dwconv_s8_dsp_refusal(dwconv(5, 5)), Refusal::kNone);
  EXPECT_EQ(dwconv_s8_dsp_refusal(dwconv(5, 6)), Refusal::kTaps);
  EXPECT_EQ(dwconv_s8_mve_refusal(dwconv(8, 8)), Refusal::kNone);
  EXPECT_EQ(dwconv_s8_mve_refusal(dwconv(8, 9)), Refusal::kTaps);
  DwConvParams mult = dwconv(3, 3);
  mult.ch_mult = 2;
  for (auto refusal : {dwconv_s8_dsp_refusal, dwconv_s8_3x3_dsp_refusal, dwconv_s8_mve_refusal,
                       dwconv_s8_3x3_scalar_refusal, dwconv_s8_scalar_refusal})
    EXPECT_EQ(refusal(mult), Refusal::kChannelMultiplier);
  EXPECT_EQ(dwconv_s8_3x3_scalar_refusal(dwconv(3, 3)), Refusal::kNone);
  EXPECT_EQ(dwconv_s8_3x3_scalar_refusal(dwconv(5, 5)), Refusal::kKernelSize);
  EXPECT_EQ(dwconv_s8_scalar_refusal(dwconv(5, 5)), Refusal::kNone);
  EXPECT_EQ(dwconv_s8_scalar_refusal(dwconv(1, 7)), Refusal::kNone);
  EXPECT_EQ(dwconv_s8_3x3_dsp_refusal(dwconv(3, 3)), Refusal::kNone);
  EXPECT_EQ(dwconv_s8_3x3_dsp_refusal(dwconv(5, 5)), Refusal::kKernelSize);
  DwConvParams strided = dwconv(3, 3);
  strided.stride_w = 2;
  EXPECT_EQ(dwconv_s8_3x3_dsp_refusal(strided), Refusal::kStride);
  DwConvParams dilated = dwconv(3, 3);
  dilated.dil_h = 2;
  EXPECT_EQ(dwconv_s8_3x3_dsp_refusal(dilated), Refusal::kDilation);
}

TEST(TierContracts, ScalarAveragePoolingUpTo361Values) {
  PoolParams p{};
  p.k_h = p.k_w = 19;
  EXPECT_EQ(avgpool_s8_scalar_refusal(p), Refusal::kNone);
  p.k_w = 20;
  EXPECT_EQ(avgpool_s8_scalar_refusal(p), Refusal::kPoolWindow);
}

TEST(TierContracts, MveDequantizationNeedsANormalScale) {
  QuantizeParams p{16, 0.5f, 0};
  EXPECT_EQ(dequantize_s8_f32_mve_refusal(p), Refusal::kNone);
  p.scale = std::numeric_limits<float>::denorm_min();
  EXPECT_EQ(dequantize_s8_f32_mve_refusal(p), Refusal::kScale);
}

// Where the tier inputs sit is part of the program format: programs compiled earlier hold them there.
TEST(TierContracts, SlotsFollowTheReferenceInputs) {
  EXPECT_EQ(kScalarPreparedSlot, 5);
  EXPECT_EQ(kScalarWindowSlot, 6);
  EXPECT_EQ(kDspConvScratchSlot, 5);
  EXPECT_EQ(kDspDwPreparedSlot, 5);
  EXPECT_EQ(kDspDw3ScratchSlot, 6);
  EXPECT_EQ(kMvePreparedSlot, 5);
  EXPECT_EQ(kMveScratchSlot, 6);
}

// Random reference inputs for `channels` channels of `weight_count` weights.
struct RandomReference {
  std::vector<int8_t> weights;
  std::vector<int32_t> bias, multipliers, shifts;
  MveReferenceInputs inputs(bool per_channel, int32_t input_offset) const {
    return {weights.data(), bias.data(), multipliers.data(), shifts.data(), per_channel, input_offset};
  }
};

RandomReference random_reference(std::mt19937& rng, int32_t weight_count, int32_t channels) {
  RandomReference r;
  std::uniform_int_distribution<int32_t> byte(-128, 127), word(std::numeric_limits<int32_t>::min(),
                                                              std::numeric_limits<int32_t>::max()),
      shift(-31, 30);
  for (int32_t i = 0; i < weight_count; ++i) r.weights.push_back(int8_t(byte(rng)));
  for (int32_t c = 0; c < channels; ++c) r.bias.push_back(word(rng)), r.multipliers.push_back(word(rng)), r.shifts.push_back(shift(rng));
  return r;
}

// Emitted bytes match; one flipped bit anywhere does not; the first channel's folded bias is its
// bias plus input_offset times its weights' sum, summed here one weight at a time.
template <typename Layout>
void expect_matches_only_its_bytes(const Layout& layout, const MveReferenceInputs& r, int32_t first_sum,
                                   std::mt19937& rng) {
  std::vector<uint8_t> bytes;
  mve_emit_prepared(layout, r, [&](uint8_t b) { return bytes.push_back(b), true; });
  ASSERT_EQ(bytes.size(), size_t(layout.total_bytes()));
  EXPECT_TRUE(mve_prepared_matches(layout, r, bytes.data()));
  int32_t folded;
  std::memcpy(&folded, bytes.data(), 4);  // table row 0, entry 0: channel 0 in both layouts
  EXPECT_EQ(uint32_t(folded), uint32_t(r.bias[0]) + uint32_t(r.input_offset) * uint32_t(first_sum));
  std::uniform_int_distribution<size_t> at(0, bytes.size() - 1);
  std::vector<size_t> positions = {0, 3, bytes.size() - 1, bytes.size() / 2};
  for (int i = 0; i < 16; ++i) positions.push_back(at(rng));
  for (size_t p : positions) {
    for (int bit : {0, 7}) {
      bytes[p] ^= uint8_t(1 << bit);
      EXPECT_FALSE(mve_prepared_matches(layout, r, bytes.data())) << "byte " << p << " bit " << bit;
      bytes[p] ^= uint8_t(1 << bit);
    }
  }
}

TEST(TierContracts, MvePreparedInputsMatchOnlyTheBytesTheyEmit) {
  std::mt19937 rng(22);
  for (int32_t depth : {1, 3, 4, 7, 64, 511, 512, 513, 1030, 2051}) {
    for (int32_t groups : {1, 2}) {
      const MveGemmLayout layout{depth, 6 * groups, groups};
      const RandomReference ref = random_reference(rng, layout.out_c * depth, layout.out_c);
      int32_t first_sum = 0;
      for (int32_t k = 0; k < depth; ++k) first_sum += ref.weights[size_t(k)];
      for (int32_t c = 0; c < layout.out_c; ++c) {
        int32_t sum = 0;
        for (int32_t k = 0; k < depth; ++k) sum += ref.weights[size_t(c * depth + k)];
        ASSERT_EQ(layout.weight_sum(ref.weights.data(), c), sum) << "depth " << depth << " channel " << c;
      }
      for (bool per_channel : {true, false}) expect_matches_only_its_bytes(layout, ref.inputs(per_channel, 37), first_sum, rng);
    }
  }
  for (int32_t channels : {1, 4, 5, 8, 16, 40}) {  // 1, 4 and 8 repeated in every lane
    const MveDwLayout layout{channels, 9};
    const RandomReference ref = random_reference(rng, channels * 9, channels);
    int32_t first_sum = 0;
    for (int32_t t = 0; t < 9; ++t) first_sum += ref.weights[size_t(t * channels)];
    expect_matches_only_its_bytes(layout, ref.inputs(true, -5), first_sum, rng);
  }
}

// A depthwise layer of 1, 2, 4 or 8 channels fills its one block with them repeated (the kernel
// computes 16 / channels pixels a pass); others pad their last block with zeros.
TEST(TierContracts, MveDepthwiseLayoutRepeatsFewChannelsInEveryLane) {
  std::mt19937 rng(5);
  for (int32_t channels : {1, 2, 4, 8, 5, 24}) {
    const MveDwLayout layout{channels, 9};
    const RandomReference ref = random_reference(rng, channels * 9, channels);
    std::vector<uint8_t> bytes;
    mve_emit_prepared(layout, ref.inputs(true, 3), [&](uint8_t b) { return bytes.push_back(b), true; });
    const int32_t last = layout.blocks() - 1;
    const uint8_t* weights = bytes.data() + last * layout.block_bytes() + layout.table_bytes();
    for (int32_t lane = 0; lane < kMveDwGroup; ++lane) {
      const int32_t c = last * kMveDwGroup + lane;
      const int32_t expected = c < channels ? c : 16 % channels == 0 ? lane % channels : -1;
      ASSERT_EQ(layout.lane_channel(last, lane), expected) << channels << " channels, lane " << lane;
      for (int32_t t = 0; t < 9; ++t) {
        const uint8_t weight = expected < 0 ? 0 : uint8_t(ref.weights[size_t(t * channels + expected)]);
        EXPECT_EQ(weights[t * kMveDwGroup + lane], weight) << channels << " channels, lane " << lane << " tap " << t;
      }
    }
  }
}

}  // namespace
}  // namespace mcuflow::kernels
