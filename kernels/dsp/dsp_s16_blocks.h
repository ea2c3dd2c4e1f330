// Building blocks of the int16-activation DSP kernels (A16W8, kernels_dsp.h), device builds
// only: the int32 path of s16_tiers.h (its weight check, its SMMLAR output stage) and the
// matrix walk of the conv and fc kernels over blocks of kDspPixels expanded windows.
#pragma once
#include "dsp_blocks.h"

#if defined(__ARM_FEATURE_DSP)

namespace mcuflow::kernels::dsp {

// sum |w[i]| for i < n, four weights per USADA8: each byte biased to w + 128, against 128.
inline uint32_t abs_sum_s8(const int8_t* w, int32_t n) {
  uint32_t sum = 0;
  int32_t i = 0;
  for (; i + 4 <= n; i += 4) sum = __usada8(uint32_t(read_word(w + i)) ^ 0x80808080u, 0x80808080u, sum);
  for (; i < n; ++i) sum += uint32_t(w[i] < 0 ? -w[i] : w[i]);
  return sum;
}

// The int32 path's output value of accumulator acc (bias included): the output offset plus the
// rounding high multiply by the channel's s16_rounding_factor, clamped.
inline int16_t s16_output(int32_t acc, int32_t factor, const OutputStage& o) {
  return int16_t(clamp_i32(smmlar(acc, factor, o.output_offset), o.act_min, o.act_max));
}

// A weighted layer as a matrix: out[r][oc] = requantize(bias[oc] + sum_k a_r[k] * w[oc][k]),
// k < depth; channel oc's multiplier and shift at oc * step (step 0: one for all).
struct S16Matrix {
  const int8_t* weights;
  const int64_t* bias;
  const int32_t* multipliers;
  const int32_t* shifts;
  int32_t step, depth, out_c;
  OutputStage out;

  bool fits_int32() const {
    return s16_gemm_fits_int32(weights, bias, shifts, depth, out_c, step != 0, out, abs_sum_s8);
  }

  // Every output channel of one block of expanded rows (scratch, depth >= 4), rows i < count
  // stored at out + i * out_c, on the int32 path.
  void block(const int16_t* scratch, int32_t count, int16_t* output) const {
    const int32_t groups = depth >> 2, tail = depth & 3;
    const int8_t* w = weights;
    const OutputStage o = out;
    for (int32_t oc = 0; oc < out_c; ++oc, ++output) {
      const int32_t b = bias ? int32_t(bias[oc]) : 0;
      int32_t a0 = b, a1 = b, a2 = b, a3 = b;
      mac_row(groups, tail, w, scratch, a0, a1, a2, a3);
      const int32_t q = oc * step, factor = s16_rounding_factor(multipliers[q], shifts[q]);
      int16_t* dst = output;
      if (count == kDspPixels) {  // the common case, without per-row tests
        dst[0] = s16_output(a0, factor, o);
        dst[out_c] = s16_output(a1, factor, o);
        dst[2 * out_c] = s16_output(a2, factor, o);
        dst[3 * out_c] = s16_output(a3, factor, o);
      } else {
        const int32_t acc[kDspPixels] = {a0, a1, a2, a3};
        for (int32_t i = 0; i < count; ++i) dst[i * out_c] = s16_output(acc[i], factor, o);
      }
    }
  }

  // rows rows in blocks of kDspPixels, row i's slot of its block filled by expand(i, slot).
  // Slots past a last partial block keep what they held: their outputs are not stored.
  template <typename Expand>
  void run(int32_t rows, int16_t* scratch, int16_t* output, Expand expand) const {
    for (int32_t first = 0; first < rows; first += kDspPixels) {
      const int32_t count = rows - first < kDspPixels ? rows - first : kDspPixels;
      for (int32_t slot = 0; slot < count; ++slot) expand(first + slot, slot);
      block(scratch, count, output + first * out_c);
    }
  }
};

using S16Writer = SlotWriter<kDspPixels, int16_t>;

}  // namespace mcuflow::kernels::dsp

#endif  // __ARM_FEATURE_DSP
