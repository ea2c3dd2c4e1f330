// Depthwise convolution (channel multiplier 1), int16 activations and int8 weights, DSP
// extension: four channels per step, each valid tap two input words (channel pairs), one word
// of four weights widened by SXTB16 into (c, c+2) and (c+1, c+3), and SMLABB / SMLATB / SMLABT /
// SMLATT into the four int32 accumulators; then the SMMLAR output stage (s16_tiers.h). Taken
// when the whole call provably fits int32; otherwise the reference's int64 walk.
#include "dsp_s16_blocks.h"
#include "mcuflow/kernels/kernels.h"
#include "../reference/window.h"

namespace mcuflow::kernels {
namespace {

constexpr int32_t kChannelChunk = 64;  // channels whose bias and factor a stack table holds

struct ChannelTable {
  int32_t bias[kChannelChunk];
  int32_t factor[kChannelChunk];
};

}  // namespace

void dwconv_s16_dsp(const DwConvParams& p, const int16_t* input, const int8_t* weights, const int64_t* bias,
                    const int32_t* multipliers, const int32_t* shifts, int16_t* output) {
  if (!s16_depthwise_fits_int32(p, weights, bias, shifts)) {
    dwconv_s16(p, input, weights, bias, multipliers, shifts, output);
    return;
  }
  const DwConvParams q = p;  // a copy the compiler may keep in registers across the stores
  const int32_t tap_step = q.dil_w * q.in_c, row_step = q.dil_h * q.in_w * q.in_c, w_row_step = q.k_w * q.out_c;
  ChannelTable t;
  for (int32_t first = 0; first < q.out_c; first += kChannelChunk) {
    const int32_t n = q.out_c - first < kChannelChunk ? q.out_c - first : kChannelChunk, quads = n & ~3;
    for (int32_t k = 0; k < n; ++k) {
      t.bias[k] = bias ? int32_t(bias[first + k]) : 0;
      t.factor[k] = s16_rounding_factor(multipliers[first + k], shifts[first + k]);
    }
    for (int32_t oy = 0; oy < q.out_h; ++oy) {
      const int32_t iy0 = oy * q.stride_h - q.pad_top;
      const detail::TapRange rows = detail::valid_taps(iy0, q.k_h, q.dil_h, q.in_h);
      for (int32_t ox = 0; ox < q.out_w; ++ox) {
        const int32_t ix0 = ox * q.stride_w - q.pad_left;
        const detail::TapRange cols = detail::valid_taps(ix0, q.k_w, q.dil_w, q.in_w);
        const int32_t taps = cols.end - cols.begin;
        const int16_t* in0 =
            input + ((iy0 + rows.begin * q.dil_h) * q.in_w + ix0 + cols.begin * q.dil_w) * q.in_c + first;
        const int8_t* w0 = weights + (rows.begin * q.k_w + cols.begin) * q.out_c + first;
        int16_t* out = output + (oy * q.out_w + ox) * q.out_c + first;
        for (int32_t k = 0; k < quads; k += 4) {
          int32_t a0 = t.bias[k], a1 = t.bias[k + 1], a2 = t.bias[k + 2], a3 = t.bias[k + 3];
          const int16_t* in_row = in0 + k;
          const int8_t* w_row = w0 + k;
          for (int32_t ky = rows.begin; ky < rows.end; ++ky, in_row += row_step, w_row += w_row_step) {
            const int16_t* in = in_row;
            const int8_t* w = w_row;
            for (int32_t kx = 0; kx < taps; ++kx, in += tap_step, w += q.out_c) {
              const int32_t x01 = dsp::read_word(in), x23 = dsp::read_word(in + 2), wv = dsp::read_word(w);
              const int32_t w02 = __sxtb16(wv), w13 = dsp::sxtb16_odd(wv);
              a0 = __smlabb(x01, w02, a0);
              a1 = __smlatb(x01, w13, a1);
              a2 = __smlabt(x23, w02, a2);
              a3 = __smlatt(x23, w13, a3);
            }
          }
          out[k] = dsp::s16_output(a0, t.factor[k], q.out);
          out[k + 1] = dsp::s16_output(a1, t.factor[k + 1], q.out);
          out[k + 2] = dsp::s16_output(a2, t.factor[k + 2], q.out);
          out[k + 3] = dsp::s16_output(a3, t.factor[k + 3], q.out);
        }
        for (int32_t k = quads; k < n; ++k) {  // the last channels, one at a time
          int32_t a = t.bias[k];
          const int16_t* in_row = in0 + k;
          const int8_t* w_row = w0 + k;
          for (int32_t ky = rows.begin; ky < rows.end; ++ky, in_row += row_step, w_row += w_row_step) {
            for (int32_t kx = 0; kx < taps; ++kx) a += int32_t(in_row[kx * tap_step]) * w_row[kx * q.out_c];
          }
          out[k] = dsp::s16_output(a, t.factor[k], q.out);
        }
      }
    }
  }
}

}  // namespace mcuflow::kernels
