// What the int16-activation (A16W8) tier kernels of every tier (kernels_dsp.h, kernels_mve.h)
// rely on, stated once: when an int32 accumulator and a rounding high multiply compute exactly
// what the reference computes (kernels/reference/s16_common.h: an int64 sum of int16 x int8
// products plus the int64 bias, multiply_by_quantized_multiplier_wide, offset, clamp).
//
// A weighted kernel takes its int32 path for a whole call when every output channel's
// accumulator provably fits int32, |bias| + 32768 * sum |w| < 2^31 (checked once per call over
// the weights), its rounding shift r = 15 - shift lies in [16, 32] and the output offset is
// below 2^30 in magnitude. Then
//   (acc * q15 + 2^(r-1)) >> r == (acc * f + 2^31) >> 32,  f = q15 << (32 - r)
// exactly (numerator and denominator scaled by 2^(32 - r); q15 < 2^15 keeps f below 2^31): one
// rounding high multiply (SMMULR, VRMULH), whose magnitude stays below 2^30, so that the offset
// joins it without overflow. Otherwise the call takes the reference's int64 arithmetic.
#pragma once
#include <cstdint>

#include "mcuflow/kernels/arith.h"
#include "mcuflow/kernels/params.h"
#include "mcuflow/kernels/tier_contract.h"

namespace mcuflow::kernels {

constexpr int64_t kS16InputMagnitude = 32768;  // the largest |int16|

// The int32 path's conditions on one requantization's shift and on the output offset.
inline bool s16_rounding_fits_high_mul(int32_t shift) { return shift >= -17 && shift <= -1; }
inline bool s16_offset_fits_int32(int32_t output_offset) {
  return output_offset > -(int32_t{1} << 30) && output_offset < (int32_t{1} << 30);
}

// Whether |bias| + 32768 * sum |w| < 2^31 bounds the accumulator (the dot of any int16 input).
inline bool s16_accumulator_fits_int32(int64_t bias, uint32_t weight_abs_sum) {
  const int64_t magnitude = (bias < 0 ? -bias : bias) + kS16InputMagnitude * int64_t(weight_abs_sum);
  return magnitude < (int64_t{1} << 31);
}

// The high-multiply factor f of one requantization: q15(multiplier) << (17 + shift), shift in [-17, -1].
inline int32_t s16_rounding_factor(int32_t multiplier, int32_t shift) {
  return q15_multiplier(multiplier) << (17 + shift);
}

// Whether a matrix-shaped call (fc, 1x1 or im2col conv: out_c weight rows of `depth` values)
// takes the int32 path; abs_sum(w, n) is the tier's sum |w[i]|, i < n.
template <typename AbsSum>
bool s16_gemm_fits_int32(const int8_t* weights, const int64_t* bias, const int32_t* shifts, int32_t depth,
                         int32_t out_c, bool per_channel, const OutputStage& out, AbsSum abs_sum) {
  if (!s16_offset_fits_int32(out.output_offset)) return false;
  for (int32_t q = 0; q < (per_channel ? out_c : 1); ++q) {
    if (!s16_rounding_fits_high_mul(shifts[q])) return false;
  }
  for (int32_t oc = 0; oc < out_c; ++oc) {
    if (!s16_accumulator_fits_int32(bias ? bias[oc] : 0, abs_sum(weights + oc * depth, depth))) return false;
  }
  return true;
}

// The same for a depthwise call (weights [k_h][k_w][out_c]).
inline bool s16_depthwise_fits_int32(const DwConvParams& p, const int8_t* weights, const int64_t* bias,
                                     const int32_t* shifts) {
  if (!s16_offset_fits_int32(p.out.output_offset)) return false;
  const int32_t taps = p.k_h * p.k_w;
  for (int32_t c = 0; c < p.out_c; ++c) {
    uint32_t abs_sum = 0;
    for (int32_t t = 0; t < taps; ++t) {
      const int32_t w = weights[t * p.out_c + c];
      abs_sum += uint32_t(w < 0 ? -w : w);
    }
    if (!s16_rounding_fits_high_mul(shifts[c]) || !s16_accumulator_fits_int32(bias ? bias[c] : 0, abs_sum))
      return false;
  }
  return true;
}

// Average pooling sums a window in int32: fewer than 65536 values of magnitude <= 32768.
inline Refusal s16_pool_window_refusal(const PoolParams& p) {
  return int64_t(p.k_h) * p.k_w >= 65536 ? Refusal::kPoolWindow : Refusal::kNone;
}

}  // namespace mcuflow::kernels
