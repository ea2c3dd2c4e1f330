// Building blocks of the int16-activation MVE kernels (A16W8, docs/quantization.md "int16
// activations"), device builds only. They compute exactly what the reference computes
// (kernels/reference/s16_common.h): an int64 sum of int16 x int8 products plus the int64 bias,
// multiply_by_quantized_multiplier_wide, output offset, clamp.
//
// Where int64 is really needed: VMLALDAV (64-bit accumulation) costs one instruction like
// VMLADAV, so the dot products never need int32 for speed; the output stage does. The kernels
// take the int32 path of s16_tiers.h for a whole call where it holds (its weight check costs a
// few instructions per 16 weights), the requantization as VRMULH on four lanes. Otherwise the
// call accumulates in int64 (VMLALDAV) and requantizes each output with the reference's own
// output stage.
#pragma once
#include "mcuflow/kernels/kernels_mve.h"
#include "mcuflow/kernels/s16_tiers.h"

#if defined(__ARM_FEATURE_MVE)
#include <arm_mve.h>

#include "../reference/s16_common.h"

namespace mcuflow::kernels::mve {

constexpr int32_t kS16Lanes = 8;  // int16 lanes of one vector

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

// The output stage of four int32 accumulators: exact VRMULH, offset, clamp.
inline int32x4_t requantize_exact(int32x4_t acc, int32x4_t factors, const OutputStage& o) {
  const int32x4_t y = vaddq_n_s32(vrmulhq_s32(acc, factors), o.output_offset);
  return vminq_s32(vmaxq_s32(y, vdupq_n_s32(o.act_min)), vdupq_n_s32(o.act_max));
}

// dst[i] = src[i] (copy_s16) or 0 (fill_zero_s16) for i < n, eight values per step.
inline void copy_s16(int16_t* dst, const int16_t* src, int32_t n) {
  for (; n > 0; n -= kS16Lanes, dst += kS16Lanes, src += kS16Lanes) {
    const mve_pred16_t p = vctp16q(uint32_t(n));
    vstrhq_p_s16(dst, vldrhq_z_s16(src, p), p);
  }
}
inline void fill_zero_s16(int16_t* dst, int32_t n) {
  for (; n > 0; n -= kS16Lanes, dst += kS16Lanes) vstrhq_p_s16(dst, vdupq_n_s16(0), vctp16q(uint32_t(n)));
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

// The fast path's per-channel tables for a group of up to kS16ChannelGroup output channels,
// filled once per call and group (on the stack): each channel's bias (int32: the bound holds)
// and VRMULH factor.
constexpr int32_t kS16ChannelGroup = 64;
struct S16ChannelTables {
  int32_t bias[kS16ChannelGroup];
  int32_t factors[kS16ChannelGroup];
};

// A weighted layer as a matrix: out[r][oc] = requantize(bias[oc] + sum_k a_r[k] * w[oc][k]),
// k < depth, for rows a_r = row_at(r) (an fc row, a 1x1 conv's input pixel, a conv's gathered
// window; row_at may reuse one buffer: each row is used before the next is asked for).
class S16Gemm {
 public:
  S16Gemm(const int8_t* weights, const int64_t* bias, const int32_t* multipliers, const int32_t* shifts,
          int32_t depth, int32_t out_c, bool per_channel, const OutputStage& out)
      : w_(weights), bias_(bias), multipliers_(multipliers), shifts_(shifts), depth_(depth), out_c_(out_c),
        per_channel_(per_channel), out_(out) {
    fast_ = s16_gemm_fits_int32(weights, bias, shifts, depth, out_c, per_channel, out, abs_sum_s8);
  }

  template <typename RowAt>
  void run(int32_t rows, RowAt row_at, int16_t* out) const {
    if (!fast_) {
      for (int32_t r = 0; r < rows; ++r) wide_row(row_at(r), out + r * out_c_);
      return;
    }
    S16ChannelTables t;
    for (int32_t g = 0; g < out_c_; g += kS16ChannelGroup) {
      const int32_t n = out_c_ - g < kS16ChannelGroup ? out_c_ - g : kS16ChannelGroup;
      fill_tables(g, n, t);
      for (int32_t r = 0; r < rows; ++r) {
        const int16_t* a = row_at(r);
        int16_t* o = out + r * out_c_ + g;
        const int8_t* w = w_ + g * depth_;
        int32_t c = 0;
        for (; c + 4 <= n; c += 4, w += 4 * depth_) {
          vstrhq_s32(o + c, requantize_exact(dot4(a, w, t.bias + c), vldrwq_s32(t.factors + c), out_));
        }
        if (c < n) {
          int32_t acc[4] = {0, 0, 0, 0};
          for (int32_t k = 0; k < n - c; ++k) acc[k] = t.bias[c + k] + dot1(a, w + k * depth_);
          vstrhq_p_s32(o + c, requantize_exact(vldrwq_s32(acc), vldrwq_s32(t.factors + c), out_),
                       vctp32q(uint32_t(n - c)));
        }
      }
    }
  }

 private:
  void fill_tables(int32_t g, int32_t n, S16ChannelTables& t) const {
    for (int32_t c = 0; c < n; ++c) {
      const int32_t q = per_channel_ ? g + c : 0;
      t.bias[c] = bias_ ? int32_t(bias_[g + c]) : 0;
      t.factors[c] = s16_rounding_factor(multipliers_[q], shifts_[q]);
    }
  }

  // The slow path: int64 accumulators, the reference's output stage.
  void wide_row(const int16_t* a, int16_t* out) const {
    for (int32_t oc = 0; oc < out_c_; ++oc) {
      const int32_t q = per_channel_ ? oc : 0;
      const int64_t acc = dot_wide(a, w_ + oc * depth_, depth_) + (bias_ ? bias_[oc] : 0);
      out[oc] = detail::output_stage_s16(acc, multipliers_[q], shifts_[q], out_);
    }
  }

  // Four channels' bias + dot in int32 (fast path: each fits), one input vector for four weight rows.
  int32x4_t dot4(const int16_t* a, const int8_t* w, const int32_t* bias) const {
    const int8_t *w0 = w, *w1 = w + depth_, *w2 = w + 2 * depth_, *w3 = w + 3 * depth_;
    int32_t s0 = bias[0], s1 = bias[1], s2 = bias[2], s3 = bias[3];
    const int32_t n = depth_ % kS16Lanes;
    // In assembly so that the six pointers and four accumulators stay in registers (the
    // compiler spills pointers inside the loop); VMLADAV takes even accumulator registers (Te),
    // the widening VLDRB.S16 low base registers (l).
    // The "m" operands say which memory it reads (the input row, the weight rows from w).
    if (depth_ >= kS16Lanes) {
      register int32_t count asm("lr") = depth_ / kS16Lanes;
      asm volatile(
          "dls lr, lr\n"
          "1:\n\t"
          "vldrh.16 q0, [%[a]], #16\n\t"
          "vldrb.s16 q1, [%[w0]], #8\n\t"
          "vmladava.s16 %[s0], q0, q1\n\t"
          "vldrb.s16 q2, [%[w1]], #8\n\t"
          "vmladava.s16 %[s1], q0, q2\n\t"
          "vldrb.s16 q1, [%[w2]], #8\n\t"
          "vmladava.s16 %[s2], q0, q1\n\t"
          "vldrb.s16 q2, [%[w3]], #8\n\t"
          "vmladava.s16 %[s3], q0, q2\n\t"
          "le lr, 1b"
          : [count] "+r"(count), [a] "+r"(a), [w0] "+l"(w0), [w1] "+l"(w1), [w2] "+l"(w2), [w3] "+l"(w3),
            [s0] "+Te"(s0), [s1] "+Te"(s1), [s2] "+Te"(s2), [s3] "+Te"(s3)
          : "m"(*reinterpret_cast<const int16_t(*)[kMaxDim]>(a)), "m"(*reinterpret_cast<const int8_t(*)[kMaxDim]>(w))
          : "q0", "q1", "q2");
    }
    if (n > 0) {  // zeroed input lanes make the unpredicated products of the tail zero
      const mve_pred16_t p = vctp16q(uint32_t(n));
      const int16x8_t x = vldrhq_z_s16(a, p);
      s0 = vmladavaq_s16(s0, x, vldrbq_z_s16(w0, p));
      s1 = vmladavaq_s16(s1, x, vldrbq_z_s16(w1, p));
      s2 = vmladavaq_s16(s2, x, vldrbq_z_s16(w2, p));
      s3 = vmladavaq_s16(s3, x, vldrbq_z_s16(w3, p));
    }
    int32x4_t acc = vdupq_n_s32(s0);
    acc = vsetq_lane_s32(s1, acc, 1);
    acc = vsetq_lane_s32(s2, acc, 2);
    return vsetq_lane_s32(s3, acc, 3);
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
