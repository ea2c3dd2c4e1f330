// Depthwise convolution (channel multiplier 1), int16 activations and int8 weights, MVE: four
// channels per int32 vector, each valid tap one VMUL + VADD (VLDRH / VLDRB widen the input and
// the weights). The int32 accumulators and the exact VRMULH output stage of mve_s16_blocks.h
// when the whole call provably fits (else the reference's int64 walk on the same taps).
#include "mcuflow/kernels/kernels.h"
#include "mve_s16_blocks.h"

namespace mcuflow::kernels {
namespace {

// Whether every channel's |bias| + 32768 * sum over taps |w| < 2^31 and every requantization
// fits VRMULH (mve_s16_blocks.h).
bool fast_path(const DwConvParams& p, const int8_t* weights, const int64_t* bias, const int32_t* shifts) {
  if (!mve::s16_offset_fits_int32(p.out.output_offset)) return false;
  const int32_t taps = p.k_h * p.k_w;
  for (int32_t c = 0; c < p.out_c; ++c) {
    uint32_t abs_sum = 0;
    for (int32_t t = 0; t < taps; ++t) {
      const int32_t w = weights[t * p.out_c + c];
      abs_sum += uint32_t(w < 0 ? -w : w);
    }
    if (!mve::s16_rounding_fits_vrmulh(shifts[c]) || !mve::accumulator_fits_int32(bias ? bias[c] : 0, abs_sum))
      return false;
  }
  return true;
}

}  // namespace

void dwconv_s16_mve(const DwConvParams& p, const int16_t* input, const int8_t* weights, const int64_t* bias,
                    const int32_t* multipliers, const int32_t* shifts, int16_t* output) {
  if (!fast_path(p, weights, bias, shifts)) {
    dwconv_s16(p, input, weights, bias, multipliers, shifts, output);
    return;
  }
  // Lane i of a bias vector: the low word of int64 bias[c + i] (the bound keeps it in int32).
  const uint32x4_t low_words = vidupq_n_u32(0, 8);
  for (int32_t oy = 0; oy < p.out_h; ++oy) {
    const int32_t iy0 = oy * p.stride_h - p.pad_top;
    const detail::TapRange rows = detail::valid_taps(iy0, p.k_h, p.dil_h, p.in_h);
    for (int32_t ox = 0; ox < p.out_w; ++ox, output += p.out_c) {
      const int32_t ix0 = ox * p.stride_w - p.pad_left;
      const detail::TapRange cols = detail::valid_taps(ix0, p.k_w, p.dil_w, p.in_w);
      for (int32_t c = 0; c < p.out_c; c += 4) {
        const mve_pred16_t lanes = vctp32q(uint32_t(p.out_c - c));
        int32x4_t acc = bias ? vldrwq_gather_offset_z_s32(reinterpret_cast<const int32_t*>(bias + c), low_words, lanes)
                             : vdupq_n_s32(0);
        for (int32_t ky = rows.begin; ky < rows.end; ++ky) {
          const int16_t* in_row = input + ((iy0 + ky * p.dil_h) * p.in_w + ix0) * p.in_c + c;
          const int8_t* w_row = weights + ky * p.k_w * p.out_c + c;
          for (int32_t kx = cols.begin; kx < cols.end; ++kx) {
            const int32x4_t x = vldrhq_z_s32(in_row + kx * p.dil_w * p.in_c, lanes);
            acc = vaddq_s32(acc, vmulq_s32(x, vldrbq_z_s32(w_row + kx * p.out_c, lanes)));
          }
        }
        const int32x4_t factors = mve::rounding_factors(vldrwq_z_s32(multipliers + c, lanes), vldrwq_z_s32(shifts + c, lanes));
        mve::store_requantized(output + c, acc, factors, p.out, lanes);
      }
    }
  }
}

}  // namespace mcuflow::kernels
