// Depthwise convolution (channel multiplier 1), int16 activations and int8 weights, MVE: eight
// channels per step, each valid tap one VLDRH, one VLDRB (weights widened to int16 lanes) and
// VMULLB / VMULLT into the even and odd channels' int32 accumulators, narrowed back in channel
// order (VMOVNB / VMOVNT) after the exact VRMULH output stage of mve_s16_blocks.h. Taken when
// the whole call provably fits int32; otherwise the reference's int64 walk.
#include "mcuflow/kernels/kernels.h"
#include "mve_s16_blocks.h"

namespace mcuflow::kernels {
namespace {

// The even and odd channels' products of `taps` taps of one window row, eight channels from
// in and w; a full block (kFull) loads without predication, a partial one zeros the lanes past
// the last channel.
template <bool kFull>
inline void accumulate_taps(const int16_t* in, const int8_t* w, int32_t taps, int32_t in_step, int32_t w_step,
                            mve_pred16_t lanes, int32x4_t& even, int32x4_t& odd) {
  for (; taps > 0; --taps, in += in_step, w += w_step) {
    const int16x8_t x = kFull ? vldrhq_s16(in) : vldrhq_z_s16(in, lanes);
    const int16x8_t wx = kFull ? vldrbq_s16(w) : vldrbq_z_s16(w, lanes);
    even = vaddq_s32(even, vmullbq_int_s16(x, wx));
    odd = vaddq_s32(odd, vmulltq_int_s16(x, wx));
  }
}

}  // namespace

void dwconv_s16_mve(const DwConvParams& p, const int16_t* input, const int8_t* weights, const int64_t* bias,
                    const int32_t* multipliers, const int32_t* shifts, int16_t* output) {
  if (!s16_depthwise_fits_int32(p, weights, bias, shifts)) {
    dwconv_s16(p, input, weights, bias, multipliers, shifts, output);
    return;
  }
  const DwConvParams q = p;  // a copy the compiler may keep in registers across the stores
  const int32_t tap_step = q.dil_w * q.in_c;
  mve::S16ChannelTables t;
  for (int32_t g = 0; g < q.out_c; g += mve::kS16ChannelGroup) {
    const int32_t n = q.out_c - g < mve::kS16ChannelGroup ? q.out_c - g : mve::kS16ChannelGroup;
    // Entry e of a block of eight: its even channels' lanes, then its odd channels'.
    for (int32_t e = 0; e < (n + 7) / 8 * 8; ++e) {
      const int32_t c = g + e / 8 * 8 + 2 * (e % 4) + (e % 8) / 4;
      t.bias[e] = c < q.out_c && bias ? int32_t(bias[c]) : 0;
      t.factors[e] = c < q.out_c ? s16_rounding_factor(multipliers[c], shifts[c]) : 0;
    }
    for (int32_t oy = 0; oy < q.out_h; ++oy) {
      const int32_t iy0 = oy * q.stride_h - q.pad_top;
      const detail::TapRange rows = detail::valid_taps(iy0, q.k_h, q.dil_h, q.in_h);
      for (int32_t ox = 0; ox < q.out_w; ++ox) {
        const int32_t ix0 = ox * q.stride_w - q.pad_left;
        const detail::TapRange cols = detail::valid_taps(ix0, q.k_w, q.dil_w, q.in_w);
        int16_t* out = output + (oy * q.out_w + ox) * q.out_c;
        for (int32_t b = 0; b * 8 < n; ++b) {
          const int32_t c = g + 8 * b;
          // Lanes past the last channel load zeros and are not stored.
          const mve_pred16_t lanes = vctp16q(uint32_t(q.out_c - c));
          int32x4_t even = vldrwq_s32(t.bias + 8 * b), odd = vldrwq_s32(t.bias + 8 * b + 4);
          for (int32_t ky = rows.begin; ky < rows.end; ++ky) {
            const int16_t* in = input + ((iy0 + ky * q.dil_h) * q.in_w + ix0 + cols.begin * q.dil_w) * q.in_c + c;
            const int8_t* w = weights + (ky * q.k_w + cols.begin) * q.out_c + c;
            if (q.out_c - c >= 8) {
              accumulate_taps<true>(in, w, cols.end - cols.begin, tap_step, q.out_c, lanes, even, odd);
            } else {
              accumulate_taps<false>(in, w, cols.end - cols.begin, tap_step, q.out_c, lanes, even, odd);
            }
          }
          even = mve::requantize_exact(even, vldrwq_s32(t.factors + 8 * b), q.out);
          odd = mve::requantize_exact(odd, vldrwq_s32(t.factors + 8 * b + 4), q.out);
          vstrhq_p_s16(out + c, vmovntq_s32(vmovnbq_s32(vdupq_n_s16(0), even), odd), lanes);
        }
      }
    }
  }
}

}  // namespace mcuflow::kernels
