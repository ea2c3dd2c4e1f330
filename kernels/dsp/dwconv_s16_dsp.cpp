// Depthwise convolution (channel multiplier 1), int16 activations and int8 weights, DSP
// extension: windows of up to kDspMaxTaps taps, each pixel's valid taps listed once as offsets;
// four channels per step, each valid tap two input words (channel pairs), one word
// of four weights widened by SXTB16 into (c, c+2) and (c+1, c+3), and SMLABB / SMLATB / SMLABT /
// SMLATT into the four int32 accumulators; then the SMMLAR output stage (s16_tiers.h). Taken
// when the whole call provably fits int32; otherwise the reference's int64 walk.
#include "dsp_s16_blocks.h"
#include "mcuflow/kernels/kernels.h"
#include "../reference/window.h"

namespace mcuflow::kernels {
namespace dsp {
namespace {

struct TapOffset {
  int32_t input_bytes, weight;
};

// The int32 path of dwconv_s16_dsp.
template <bool kRelu>
void depthwise_s16(const DwConvParams& p, const int16_t* input, const int8_t* weights, const int64_t* bias,
                   const int32_t* multipliers, const int32_t* shifts, int16_t* output) {
  const DwConvParams q = p;  // a copy the compiler may keep in registers across the stores
  const int32_t tap_step = q.dil_w * q.in_c, row_step = q.dil_h * q.in_w * q.in_c;
  S16Channel table[kS16ChannelChunk];
  for (int32_t first = 0; first < q.out_c; first += kS16ChannelChunk) {
    const int32_t n = q.out_c - first < kS16ChannelChunk ? q.out_c - first : kS16ChannelChunk, quads = n & ~3;
    fill_channels(table, first, n, bias, multipliers, shifts, 1);
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
        // The valid taps' input (in bytes) and weight offsets from the first's.
        TapOffset offsets[kDspMaxTaps];
        TapOffset* offsets_end = offsets;
        for (int32_t ky = 0; ky < rows.end - rows.begin; ++ky) {
          for (int32_t kx = 0; kx < taps; ++kx) {
            *offsets_end++ = {2 * (ky * row_step + kx * tap_step), (ky * q.k_w + kx) * q.out_c};
          }
        }
        const S16Channel* t = table;
        for (int32_t k = 0; k < quads; k += 4, t += 4) {
          int32_t a0 = t[0].bias, a1 = t[1].bias, a2 = t[2].bias, a3 = t[3].bias;
          const auto* in = reinterpret_cast<const uint8_t*>(in0 + k);
          const int8_t* w = w0 + k;
          __asm__("" : "+r"(in), "+r"(w));  // opaque: GCC would add k inside the loop otherwise
          for (const TapOffset* o = offsets; o != offsets_end; ++o) {
            const int32_t x01 = read_word(in + o->input_bytes), x23 = read_word(in + o->input_bytes + 4);
            const int32_t wv = read_word(w + o->weight), w02 = __sxtb16(wv), w13 = sxtb16_odd(wv);
            a0 = __smlabb(x01, w02, a0);
            a1 = __smlatb(x01, w13, a1);
            a2 = __smlabt(x23, w02, a2);
            a3 = __smlatt(x23, w13, a3);
          }
          out[k] = s16_output<kRelu>(a0, t[0].factor, q.out);
          out[k + 1] = s16_output<kRelu>(a1, t[1].factor, q.out);
          out[k + 2] = s16_output<kRelu>(a2, t[2].factor, q.out);
          out[k + 3] = s16_output<kRelu>(a3, t[3].factor, q.out);
        }
        for (int32_t k = quads; k < n; ++k, ++t) {  // the last channels, one at a time
          int32_t a = t->bias;
          const auto* in = reinterpret_cast<const uint8_t*>(in0 + k);
          for (const TapOffset* o = offsets; o != offsets_end; ++o) {
            a += int32_t(*reinterpret_cast<const int16_t*>(in + o->input_bytes)) * w0[k + o->weight];
          }
          out[k] = s16_output<kRelu>(a, t->factor, q.out);
        }
      }
    }
  }
}

}  // namespace
}  // namespace dsp

void dwconv_s16_dsp(const DwConvParams& p, const int16_t* input, const int8_t* weights, const int64_t* bias,
                    const int32_t* multipliers, const int32_t* shifts, int16_t* output) {
  if (!s16_depthwise_fits_int32(p, weights, bias, shifts)) {
    dwconv_s16(p, input, weights, bias, multipliers, shifts, output);
    return;
  }
  dsp::with_clamp(p.out, [&](auto relu) { dsp::depthwise_s16<relu>(p, input, weights, bias, multipliers, shifts, output); });
}

}  // namespace mcuflow::kernels
