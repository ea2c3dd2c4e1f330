// Depthwise convolution (ch_mult 1), int8, DSP extension: four channels at a time, each input
// word split by SXTAB16 into channels (c, c+2) and (c+1, c+3), multiplied by SMLABB/SMLATT with
// weights the compiler already widened (kernels_dsp.h). Padding taps read a pixel of zero
// points, so border pixels take the same path as the others.
#include "dsp_blocks.h"

namespace mcuflow::kernels {
namespace {

template <bool kFast>
void run(const DwConvParams& params, const dsp::Output& o, const int8_t* input, const int32_t* prepared,
         const int32_t* bias, const int32_t* multipliers, const int32_t* shifts, int8_t* output) {
  const DwConvParams p = params;  // a copy: the output stores could alias the fields otherwise
  const DspTables tables{bias, multipliers, shifts, 1};
  const int32_t taps = p.k_h * p.k_w, groups = p.out_c / 4;
  const int32_t offset_pair = int32_t((uint32_t(p.input_offset) & 0xFFFFu) * 0x10001u);
  const int8_t* padding = reinterpret_cast<const int8_t*>(prepared + dsp_dw_weight_words(p));

  const int8_t* tap_input[kDspMaxTaps];
  for (int32_t oy = 0; oy < p.out_h; ++oy) {
    for (int32_t ox = 0; ox < p.out_w; ++ox, output += p.out_c) {
      const int32_t iy0 = oy * p.stride_h - p.pad_top, ix0 = ox * p.stride_w - p.pad_left;
      for (int32_t ky = 0, t = 0, iy = iy0; ky < p.k_h; ++ky, iy += p.dil_h) {
        for (int32_t kx = 0, ix = ix0; kx < p.k_w; ++kx, ++t, ix += p.dil_w) {
          const bool inside = iy >= 0 && iy < p.in_h && ix >= 0 && ix < p.in_w;
          tap_input[t] = inside ? input + (iy * p.in_w + ix) * p.in_c : padding;
        }
      }
      const int32_t* w = prepared;
      int32_t c = 0;
      for (; c < 4 * groups; c += 4, w += 2 * taps) {
        int32_t a0 = dsp::acc_start<kFast>(tables, c, o), a1 = dsp::acc_start<kFast>(tables, c + 1, o);
        int32_t a2 = dsp::acc_start<kFast>(tables, c + 2, o), a3 = dsp::acc_start<kFast>(tables, c + 3, o);
        dsp::dw_taps(taps, tap_input, c, w, offset_pair, a0, a1, a2, a3);
        const uint32_t packed = dsp::pack4(dsp::channel_value<kFast>(a0, tables, c, o),
                                           dsp::channel_value<kFast>(a1, tables, c + 1, o),
                                           dsp::channel_value<kFast>(a2, tables, c + 2, o),
                                           dsp::channel_value<kFast>(a3, tables, c + 3, o));
        std::memcpy(output + c, &packed, 4);
      }
      for (; c < p.out_c; ++c) {  // the last 1-3 channels, one by one
        int32_t acc = dsp::acc_start<kFast>(tables, c, o);
        for (int32_t t = 0; t < taps; ++t) {
          const int32_t weight = int16_t(w[2 * t + (c & 1)] >> (c & 2 ? 16 : 0));
          acc += (tap_input[t][c] + p.input_offset) * weight;
        }
        output[c] = int8_t(dsp::channel_value<kFast>(acc, tables, c, o));
      }
    }
  }
}

}  // namespace

void dwconv_s8_dsp(const DwConvParams& p, const int8_t* input, const int32_t* prepared, const int32_t* bias,
                   const int32_t* multipliers, const int32_t* shifts, int8_t* output) {
  const dsp::Output o{p.out.output_offset, p.out.act_min, p.out.act_max, p.k_h * p.k_w};
  if (dsp::fast_outputs(o, {bias, multipliers, shifts, 1}, p.out_c)) {
    run<true>(p, o, input, prepared, bias, multipliers, shifts, output);
  } else {
    run<false>(p, o, input, prepared, bias, multipliers, shifts, output);
  }
}

}  // namespace mcuflow::kernels
