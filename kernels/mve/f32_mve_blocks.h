// Building blocks of the float32 MVE kernels (conv_f32_mve, fc_f32_mve, dwconv_f32_mve), device
// builds only. Kernel-private, like mve_blocks.h.
//
// Why a float MVE kernel can equal its reference bit for bit: each output lane sums the same
// products in the same order as the reference (VMUL then VADD, two roundings, never VFMA), and
// MVE rounds to nearest as the FPU does. The one difference is that MVE float arithmetic always
// flushes denormal inputs and results to zero (the FPU, like the host, keeps them). So each
// kernel first scans its operands' magnitudes (integer compares on the float bits, so a denormal
// is seen as one) and runs its reference wherever a denormal or an overflow could occur
// (exact_in_mve_lanes); docs/kernels_float.md gives the argument.
#pragma once
#include "../reference/window.h"
#include "mcuflow/kernels/kernels_mve.h"

#if defined(__ARM_FEATURE_MVE)
#include <arm_mve.h>

namespace mcuflow::kernels::mve_f32 {

// The biased exponent fields of the smallest nonzero and of the largest magnitude among n floats;
// any_nonzero false when all are zero.
struct MagnitudeRange {
  uint32_t min_exponent, max_exponent;
  bool any_nonzero;
};

inline MagnitudeRange magnitude_range(const float* values, int32_t n) {
  // |v| as bits, minus one: zero becomes the largest unsigned value, so the unsigned minimum is
  // the smallest nonzero magnitude's (lanes past n load 0 and change neither extreme).
  uint32x4_t lowest_minus_one = vdupq_n_u32(0xFFFFFFFFu), highest = vdupq_n_u32(0);
  const uint32x4_t sign_cleared = vdupq_n_u32(0x7FFFFFFFu);
  const uint32_t* bits = reinterpret_cast<const uint32_t*>(values);
  const auto take = [&](uint32x4_t v) {
    const uint32x4_t magnitude = vandq_u32(v, sign_cleared);
    highest = vmaxq_u32(highest, magnitude);
    lowest_minus_one = vminq_u32(lowest_minus_one, vsubq_n_u32(magnitude, 1));
  };
  int32_t i = 0;
  for (; i + 4 <= n; i += 4) take(vld1q_u32(bits + i));  // plain loads: a predicated one costs a VPST
  if (i < n) take(vldrwq_z_u32(bits + i, vctp32q(uint32_t(n - i))));
  const uint32_t lowest = vminvq_u32(0xFFFFFFFFu, lowest_minus_one) + 1;  // 0: all zero
  return {lowest >> 23, vmaxvq_u32(0, highest) >> 23, lowest != 0};
}

// Biased exponent field of a magnitude bound: 2^-103 (every multiple of 2^-126 from there up)
// and the inputs' largest field (255 is infinity or NaN).
inline constexpr uint32_t kExponentOf2PowMinus103 = 127 - 103;
inline constexpr uint32_t kInfiniteExponent = 255;

inline uint32_t exponent_field(float v) {
  uint32_t bits;
  __builtin_memcpy(&bits, &v, sizeof bits);
  return (bits >> 23) & 0xFF;
}

// Whether out = clamp(bias + sum over `depth` products x * w) computed in MVE lanes equals the
// FPU's, for inputs, weights and biases in these ranges (bias.any_nonzero false without bias):
// - every nonzero product is at least 2^-103 in magnitude (both factors normal, exponents
//   adding up), so it and every nonzero bias are multiples of 2^-126; sums of such multiples
//   round to multiples of 2^-126, so no partial sum is ever denormal;
// - no operand is infinite or NaN and the sums stay below 2^126 (each product below
//   2^(ex + ew - 252), depth of them below 2^(... + ceil log2 depth), with room for the
//   roundings' growth up to depth 2^22): no infinity, so no NaN, and the clamp compares finite
//   normal values (the bounds must not be denormal);
// - zero inputs or weights give zero products, exact in both.
inline bool exact_in_mve_lanes(const MagnitudeRange& x, const MagnitudeRange& w, const MagnitudeRange& bias,
                               int32_t depth, float act_min, float act_max) {
  if (x.max_exponent >= kInfiniteExponent || w.max_exponent >= kInfiniteExponent ||
      bias.max_exponent >= kInfiniteExponent || depth > (1 << 22))
    return false;
  if ((act_min != 0.0f && exponent_field(act_min) == 0) || (act_max != 0.0f && exponent_field(act_max) == 0)) return false;
  if (bias.any_nonzero && (bias.min_exponent < kExponentOf2PowMinus103 || bias.max_exponent > 251)) return false;
  if (!x.any_nonzero || !w.any_nonzero) return true;
  if (x.min_exponent == 0 || w.min_exponent == 0 || x.min_exponent + w.min_exponent < 127 + 127 - 103) return false;
  const int32_t depth_log2 = depth > 1 ? 32 - __builtin_clz(uint32_t(depth - 1)) : 0;
  return int32_t(x.max_exponent + w.max_exponent) - 252 + depth_log2 <= 125;
}

// exact_in_mve_lanes for the operands of one call: `inputs` input floats, `weights_n` weights,
// out_c biases (or none), sums of `depth` products.
inline bool operands_exact(const float* input, int32_t inputs, const float* weights, int32_t weights_n,
                           const float* bias, int32_t out_c, int32_t depth, float act_min, float act_max) {
  return exact_in_mve_lanes(magnitude_range(input, inputs), magnitude_range(weights, weights_n),
                            bias ? magnitude_range(bias, out_c) : MagnitudeRange{0, 0, false}, depth, act_min, act_max);
}

// Calls window(iy0, ix0, rows, cols, out) for every output pixel of a convolution's params, in
// the reference's order: the window's top-left input coordinates, its valid taps and the
// pixel's out_c outputs.
template <typename Params, typename Window>
inline void for_each_output_pixel(const Params& p, float* output, Window window) {
  for (int32_t oy = 0; oy < p.out_h; ++oy) {
    const int32_t iy0 = oy * p.stride_h - p.pad_top;
    const detail::TapRange rows = detail::valid_taps(iy0, p.k_h, p.dil_h, p.in_h);
    for (int32_t ox = 0; ox < p.out_w; ++ox, output += p.out_c) {
      const int32_t ix0 = ox * p.stride_w - p.pad_left;
      window(iy0, ix0, rows, detail::valid_taps(ix0, p.k_w, p.dil_w, p.in_w), output);
    }
  }
}

// The reference's clamp on four lanes: acc < lo ? lo : acc, then acc > hi ? hi : acc, by compare
// and select as the reference writes it (VMAXNM / VMINNM would turn -0 into +0 against a zero bound).
inline float32x4_t clamp(float32x4_t acc, float act_min, float act_max) {
  acc = vpselq_f32(vdupq_n_f32(act_min), acc, vcmpltq_n_f32(acc, act_min));
  return vpselq_f32(vdupq_n_f32(act_max), acc, vcmpgtq_n_f32(acc, act_max));
}

// Lanes of the output channels [oc, oc + 4) that exist (VCTP of a count of at most zero is none).
inline mve_pred16_t channel_lanes(int32_t oc, int32_t out_c) { return vctp32q(uint32_t(out_c > oc ? out_c - oc : 0)); }

// The next four floats of a gather, one per lane, from the lanes' byte addresses plus 4, which
// then step on by 4 (VLDRW with writeback: one instruction per four weights; GCC 12's intrinsic
// for it rejects its own immediate).
inline float32x4_t gather_next(uint32x4_t& addresses) {
  float32x4_t v;
  asm("vldrw.u32 %q[v], [%q[a], #4]!" : [v] "=&w"(v), [a] "+w"(addresses));
  return v;
}

// kBlocks x 4 output channels from oc on, of one output pixel or row: lane l of block b sums, from
// 0.0f, x[i] * w[oc + 4b + l][at + i] over i < n for each run (x, at, n) that for_each_run hands
// to its callback, in that order (the reference's), then adds the bias (when there is one: a
// missing bias adds nothing, not +0, which would turn -0 into +0), clamps and stores. The
// weights are rows of `depth` floats. Lanes past out_c gather the last channel's row again
// (unpredicated loads that stay inside the weights) and are not stored.
template <int kBlocks, typename ForEachRun>
inline void output_channel_blocks(int32_t oc, int32_t out_c, int32_t depth, const float* weights, const float* bias,
                                  float act_min, float act_max, float* out, ForEachRun for_each_run) {
  float32x4_t acc[kBlocks];
  uint32x4_t rows[kBlocks];  // byte address of each lane's weight row, less 4
  const uint32_t first_row = uint32_t(reinterpret_cast<uintptr_t>(weights + int64_t(oc) * depth)) - 4u;
  for (int b = 0; b < kBlocks; ++b) {
    acc[b] = vdupq_n_f32(0.0f);
    const uint32x4_t row = vminq_u32(vidupq_n_u32(uint32_t(4 * b), 1), vdupq_n_u32(uint32_t(out_c - oc - 1)));
    rows[b] = vaddq_n_u32(vmulq_n_u32(row, uint32_t(depth) * 4u), first_row);
  }
  for_each_run([&](const float* x, int32_t at, int32_t n) {
    uint32x4_t address[kBlocks];
    for (int b = 0; b < kBlocks; ++b) address[b] = vaddq_n_u32(rows[b], uint32_t(at) * 4u);
    for (int32_t i = 0; i < n; ++i) {
      const float xi = x[i];
      for (int b = 0; b < kBlocks; ++b) acc[b] = vaddq_f32(acc[b], vmulq_n_f32(gather_next(address[b]), xi));
    }
  });
  for (int b = 0; b < kBlocks; ++b) {
    const mve_pred16_t lanes = channel_lanes(oc + 4 * b, out_c);
    float32x4_t v = acc[b];
    if (bias) v = vaddq_f32(v, vldrwq_z_f32(bias + oc + 4 * b, lanes));
    vstrwq_p_f32(out + oc + 4 * b, clamp(v, act_min, act_max), lanes);
  }
}

// Every output channel of one pixel or row: blocks of 8 channels, a last block of 4 or fewer alone.
template <typename ForEachRun>
inline void all_output_channels(int32_t out_c, int32_t depth, const float* weights, const float* bias, float act_min,
                                float act_max, float* out, ForEachRun for_each_run) {
  int32_t oc = 0;
  for (; oc + 4 < out_c; oc += 8)
    output_channel_blocks<2>(oc, out_c, depth, weights, bias, act_min, act_max, out, for_each_run);
  if (oc < out_c) output_channel_blocks<1>(oc, out_c, depth, weights, bias, act_min, act_max, out, for_each_run);
}

}  // namespace mcuflow::kernels::mve_f32

#endif  // __ARM_FEATURE_MVE
