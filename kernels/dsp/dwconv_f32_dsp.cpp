// Depthwise convolution, float32, DSP tier on a core with an FPU, channel multiplier 1: bit for
// bit dwconv_f32. Inputs (NHWC) and weights ([k_h][k_w][c]) of neighbouring channels are adjacent:
// eight channels per pass, one VLDM of eight inputs and one of eight weights per tap, a VMLA.F32
// per product; each channel sums its taps in the reference's order. The last out_c % 8 channels
// are the reference's loop. A pixel's channels are written after its window is read, pixels
// forwards (f32_dsp_blocks.h).
#include "f32_dsp_blocks.h"

namespace mcuflow::kernels {
namespace {

constexpr int32_t kPassChannels = 8;

// acc[c] += x[c] * w[c] over `taps` taps, the next tap's inputs x_step bytes and weights w_step
// bytes further (inputs in s0-s7, weights in s16-s23).
void accumulate_taps(float (&acc)[kPassChannels], const float* x, const float* w, int32_t taps, int32_t x_step,
                     int32_t w_step) {
  if (taps <= 0) return;
  asm volatile(
      "1:\n\t"
      "vldm %[x], {s0-s7}\n\t"
      "vldm %[w], {s16-s23}\n\t"
      "vmla.f32 %[a0], s0, s16\n\t"
      "vmla.f32 %[a1], s1, s17\n\t"
      "vmla.f32 %[a2], s2, s18\n\t"
      "vmla.f32 %[a3], s3, s19\n\t"
      "vmla.f32 %[a4], s4, s20\n\t"
      "vmla.f32 %[a5], s5, s21\n\t"
      "vmla.f32 %[a6], s6, s22\n\t"
      "vmla.f32 %[a7], s7, s23\n\t"
      "add %[x], %[x], %[x_step]\n\t"
      "add %[w], %[w], %[w_step]\n\t"
      "subs %[taps], %[taps], #1\n\t"
      "bne 1b"
      : [a0] "+t"(acc[0]), [a1] "+t"(acc[1]), [a2] "+t"(acc[2]), [a3] "+t"(acc[3]), [a4] "+t"(acc[4]),
        [a5] "+t"(acc[5]), [a6] "+t"(acc[6]), [a7] "+t"(acc[7]), [x] "+r"(x), [w] "+r"(w), [taps] "+r"(taps)
      : [x_step] "r"(x_step), [w_step] "r"(w_step)
      : "s0", "s1", "s2", "s3", "s4", "s5", "s6", "s7", "s16", "s17", "s18", "s19", "s20", "s21", "s22", "s23", "cc",
        "memory");
}

}  // namespace

void dwconv_f32_dsp(const DwConvParams& p, const float* input, const float* weights, const float* bias,
                    float* output) {
  const int32_t in_step = p.dil_w * p.in_c;
  for (int32_t oy = 0; oy < p.out_h; ++oy) {
    const int32_t iy0 = oy * p.stride_h - p.pad_top;
    const detail::TapRange rows = detail::valid_taps(iy0, p.k_h, p.dil_h, p.in_h);
    for (int32_t ox = 0; ox < p.out_w; ++ox, output += p.out_c) {
      const int32_t ix0 = ox * p.stride_w - p.pad_left;
      const detail::TapRange cols = detail::valid_taps(ix0, p.k_w, p.dil_w, p.in_w);
      // the first input and weight of channel c's taps in row ky
      const auto row_input = [&](int32_t ky, int32_t c) {
        return input + ((iy0 + ky * p.dil_h) * p.in_w + ix0 + cols.begin * p.dil_w) * p.in_c + c;
      };
      const auto row_weights = [&](int32_t ky, int32_t c) { return weights + (ky * p.k_w + cols.begin) * p.out_c + c; };
      int32_t c = 0;
      for (; c + kPassChannels <= p.out_c; c += kPassChannels) {
        float acc[kPassChannels] = {};
        for (int32_t ky = rows.begin; ky < rows.end; ++ky)
          accumulate_taps(acc, row_input(ky, c), row_weights(ky, c), cols.end - cols.begin, in_step * 4, p.out_c * 4);
        for (int32_t k = 0; k < kPassChannels; ++k)
          output[c + k] = dsp_f32::finished(acc[k], bias, c + k, p.act_min_f, p.act_max_f);
      }
      for (; c < p.out_c; ++c) {
        float acc = 0.0f;
        for (int32_t ky = rows.begin; ky < rows.end; ++ky) {
          const float *x = row_input(ky, c), *w = row_weights(ky, c);
          for (int32_t kx = cols.begin; kx < cols.end; ++kx, x += in_step, w += p.out_c) acc += *x * *w;
        }
        output[c] = dsp_f32::finished(acc, bias, c, p.act_min_f, p.act_max_f);
      }
    }
  }
}

}  // namespace mcuflow::kernels
