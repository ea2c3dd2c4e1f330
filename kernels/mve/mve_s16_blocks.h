// Building blocks of the int16-activation MVE kernels (A16W8, docs/quantization.md "int16
// activations"), device builds only. They compute exactly what the reference computes
// (kernels/reference/s16_common.h): an int64 sum of int16 x int8 products plus the int64 bias,
// multiply_by_quantized_multiplier_wide, output offset, clamp.
//
// Where int64 is really needed: VMLALDAV (64-bit accumulation) costs one instruction like
// VMLADAV, so the dot products never need int32 for speed; the output stage does. The kernels
// take a fast path for a whole call when every channel's accumulator provably fits int32
// (|bias| + 32768 * sum |w| < 2^31, checked once per call over the weights: a few instructions
// per 16 weights) and every channel's rounding shift r = 15 - shift lies in [16, 32]. Then
//   (acc * q15 + 2^(r-1)) >> r == VRMULH(acc, q15 << (32 - r))
// exactly (numerator and denominator scaled by 2^(32 - r); q15 < 2^15 keeps the factor below
// 2^31), and the requantization runs on four lanes. Otherwise the call accumulates in int64
// (VMLALDAV) and requantizes each output with the reference's own output stage.
#pragma once
#include "mcuflow/kernels/kernels_mve.h"

#if defined(__ARM_FEATURE_MVE)
#include <arm_mve.h>

#include "../reference/s16_common.h"

namespace mcuflow::kernels::mve {

constexpr int64_t kS16InputMagnitude = 32768;  // the largest |int16|
constexpr int32_t kS16Lanes = 8;               // int16 lanes of one vector

// The fast path's condition on one requantization (multiplier, shift) and the output offset.
inline bool s16_rounding_fits_vrmulh(int32_t shift) { return shift >= -17 && shift <= -1; }
inline bool s16_offset_fits_int32(int32_t output_offset) {
  return output_offset > -(int32_t{1} << 30) && output_offset < (int32_t{1} << 30);
}

// sum |w[i]| for i < n, sixteen weights per VABAV.
inline uint32_t abs_sum_s8(const int8_t* w, int32_t n) {
  uint32_t sum = 0;
  const int8x16_t zero = vdupq_n_s8(0);
  for (; n > 0; n -= 16, w += 16) {
    const mve_pred16_t p = vctp8q(uint32_t(n));
    sum = vabavq_p_s8(sum, vldrbq_z_s8(w, p), zero, p);
  }
  return sum;
}

// Whether |bias| + 32768 * sum |w| < 2^31 bounds the accumulator (the dot of any int16 input).
inline bool accumulator_fits_int32(int64_t bias, uint32_t weight_abs_sum) {
  const int64_t magnitude = (bias < 0 ? -bias : bias) + kS16InputMagnitude * int64_t(weight_abs_sum);
  return magnitude < (int64_t{1} << 31);
}

// The four lanes' VRMULH factors q15(multiplier) << (17 + shift) (shift in [-17, -1]).
inline int32x4_t rounding_factors(int32x4_t multipliers, int32x4_t shifts) {
  int32x4_t q15 = vaddq_s32(vshrq_n_s32(multipliers, 16), vandq_s32(vshrq_n_s32(multipliers, 15), vdupq_n_s32(1)));
  q15 = vminq_s32(q15, vdupq_n_s32(32767));
  return vshlq_s32(q15, vaddq_n_s32(shifts, 17));
}

// The output stage of four int32 accumulators: exact VRMULH, offset, clamp, stored as int16
// (lanes where p is false untouched).
inline void store_requantized(int16_t* out, int32x4_t acc, int32x4_t factors, const OutputStage& o, mve_pred16_t p) {
  int32x4_t y = vaddq_n_s32(vrmulhq_s32(acc, factors), o.output_offset);
  y = vminq_s32(vmaxq_s32(y, vdupq_n_s32(o.act_min)), vdupq_n_s32(o.act_max));
  vstrhq_p_s32(out, y, p);
}

// sum a[i] * w[i] for i < n in int64 (VMLALDAV), the slow path's dot product.
inline int64_t dot_wide(const int16_t* a, const int8_t* w, int32_t n) {
  int64_t acc = 0;
  for (; n > 0; n -= kS16Lanes, a += kS16Lanes, w += kS16Lanes) {
    const mve_pred16_t p = vctp16q(uint32_t(n));
    acc = vmlaldavaq_s16(acc, vldrhq_z_s16(a, p), vldrbq_z_s16(w, p));
  }
  return acc;
}

// A weighted layer as a matrix: out[oc] = requantize(bias[oc] + sum_k a[k] * w[oc][k]), k < depth,
// for one row a at a time (an fc row, a 1x1 conv's input pixel, a conv's gathered window).
class S16Gemm {
 public:
  S16Gemm(const int8_t* weights, const int64_t* bias, const int32_t* multipliers, const int32_t* shifts,
          int32_t depth, int32_t out_c, bool per_channel, const OutputStage& out)
      : w_(weights), bias_(bias), multipliers_(multipliers), shifts_(shifts), depth_(depth), out_c_(out_c),
        per_channel_(per_channel), out_(out) {
    fast_ = s16_offset_fits_int32(out.output_offset);
    for (int32_t q = 0; fast_ && q < (per_channel ? out_c : 1); ++q) fast_ = s16_rounding_fits_vrmulh(shifts[q]);
    for (int32_t oc = 0; fast_ && oc < out_c; ++oc)
      fast_ = accumulator_fits_int32(bias ? bias[oc] : 0, abs_sum_s8(weights + oc * depth, depth));
  }

  void row(const int16_t* a, int16_t* out) const {
    if (!fast_) {
      for (int32_t oc = 0; oc < out_c_; ++oc) {
        const int32_t q = per_channel_ ? oc : 0;
        const int64_t acc = dot_wide(a, w_ + oc * depth_, depth_) + (bias_ ? bias_[oc] : 0);
        out[oc] = detail::output_stage_s16(acc, multipliers_[q], shifts_[q], out_);
      }
      return;
    }
    const int32x4_t fixed_factors = per_channel_ ? vdupq_n_s32(0)
                                                 : rounding_factors(vdupq_n_s32(multipliers_[0]), vdupq_n_s32(shifts_[0]));
    for (int32_t oc = 0; oc < out_c_; oc += 4) {
      const int32_t channels = out_c_ - oc < 4 ? out_c_ - oc : 4;
      int32_t acc[4] = {0, 0, 0, 0};
      if (channels == 4) {
        dot4(a, w_ + oc * depth_, acc);
      } else {
        for (int32_t c = 0; c < channels; ++c) acc[c] = dot1(a, w_ + (oc + c) * depth_);
      }
      if (bias_) {
        for (int32_t c = 0; c < channels; ++c) acc[c] += int32_t(bias_[oc + c]);
      }
      const mve_pred16_t p = vctp32q(uint32_t(channels));
      const int32x4_t factors = per_channel_ ? rounding_factors(vldrwq_z_s32(multipliers_ + oc, p),
                                                                vldrwq_z_s32(shifts_ + oc, p))
                                             : fixed_factors;
      store_requantized(out + oc, vldrwq_s32(acc), factors, out_, p);
    }
  }

 private:
  // Four channels' dots in int32 (fast path: each fits), one input vector for four weight rows.
  void dot4(const int16_t* a, const int8_t* w, int32_t acc[4]) const {
    const int8_t *w0 = w, *w1 = w + depth_, *w2 = w + 2 * depth_, *w3 = w + 3 * depth_;
    int32_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;
    int32_t n = depth_;
    for (; n >= kS16Lanes; n -= kS16Lanes) {
      const int16x8_t x = vldrhq_s16(a);
      s0 = vmladavaq_s16(s0, x, vldrbq_s16(w0));
      s1 = vmladavaq_s16(s1, x, vldrbq_s16(w1));
      s2 = vmladavaq_s16(s2, x, vldrbq_s16(w2));
      s3 = vmladavaq_s16(s3, x, vldrbq_s16(w3));
      a += kS16Lanes, w0 += kS16Lanes, w1 += kS16Lanes, w2 += kS16Lanes, w3 += kS16Lanes;
    }
    if (n > 0) {  // zeroed input lanes make the unpredicated products of the tail zero
      const mve_pred16_t p = vctp16q(uint32_t(n));
      const int16x8_t x = vldrhq_z_s16(a, p);
      s0 = vmladavaq_s16(s0, x, vldrbq_z_s16(w0, p));
      s1 = vmladavaq_s16(s1, x, vldrbq_z_s16(w1, p));
      s2 = vmladavaq_s16(s2, x, vldrbq_z_s16(w2, p));
      s3 = vmladavaq_s16(s3, x, vldrbq_z_s16(w3, p));
    }
    acc[0] = s0, acc[1] = s1, acc[2] = s2, acc[3] = s3;
  }
  int32_t dot1(const int16_t* a, const int8_t* w) const {
    int32_t s = 0;
    for (int32_t n = depth_; n > 0; n -= kS16Lanes, a += kS16Lanes, w += kS16Lanes) {
      const mve_pred16_t p = vctp16q(uint32_t(n));
      s = vmladavaq_s16(s, vldrhq_z_s16(a, p), vldrbq_z_s16(w, p));
    }
    return s;
  }

  const int8_t* w_;
  const int64_t* bias_;
  const int32_t* multipliers_;
  const int32_t* shifts_;
  int32_t depth_, out_c_;
  bool per_channel_;
  OutputStage out_;
  bool fast_;
};

}  // namespace mcuflow::kernels::mve

#endif  // __ARM_FEATURE_MVE
