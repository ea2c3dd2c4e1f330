// Depthwise convolution, float32, MVE, channel multiplier 1: four channels per vector, 8 per
// pass (more spill the 8 Q registers), bit for bit dwconv_f32. Inputs and weights of neighbouring channels are adjacent (NHWC input, weights
// [k_h][k_w][c]), so both are plain vector loads; each lane sums its channel's products over the
// valid taps in the reference's order with separate VMUL and VADD. A pixel's channels are
// written after its window is read, pixels forwards, as the reference does. Operands in whose
// range MVE's flush-to-zero could change a result run the reference instead (f32_mve_blocks.h).
#include "f32_mve_blocks.h"
#include "mcuflow/kernels/kernels.h"

namespace mcuflow::kernels {
namespace {

// Channels [c, c + 4 * kBlocks) of one output pixel; kTail: the last, partial pass, whose loads
// and stores are predicated (predicated loads cost a VPST each: whole passes load plainly).
template <int kBlocks, bool kTail>
void channel_blocks(const DwConvParams& p, int32_t c, const float* input, int32_t iy0, int32_t ix0,
                    detail::TapRange rows, detail::TapRange cols, const float* weights, const float* bias,
                    float* out) {
  mve_pred16_t lanes[kBlocks];
  float32x4_t acc[kBlocks];
  for (int b = 0; b < kBlocks; ++b) {
    lanes[b] = mve_f32::channel_lanes(c + 4 * b, p.out_c);
    acc[b] = vdupq_n_f32(0.0f);
  }
  const int32_t in_step = p.dil_w * p.in_c;
  for (int32_t ky = rows.begin; ky < rows.end; ++ky) {
    const float* in = input + ((iy0 + ky * p.dil_h) * p.in_w + ix0 + cols.begin * p.dil_w) * p.in_c + c;
    const float* w = weights + (ky * p.k_w + cols.begin) * p.out_c + c;
    for (int32_t kx = cols.begin; kx < cols.end; ++kx, in += in_step, w += p.out_c)
      for (int b = 0; b < kBlocks; ++b) {
        const float32x4_t x = kTail ? vldrwq_z_f32(in + 4 * b, lanes[b]) : vld1q_f32(in + 4 * b);
        const float32x4_t k = kTail ? vldrwq_z_f32(w + 4 * b, lanes[b]) : vld1q_f32(w + 4 * b);
        acc[b] = vaddq_f32(acc[b], vmulq_f32(x, k));
      }
  }
  for (int b = 0; b < kBlocks; ++b) {
    float32x4_t v = acc[b];
    if (bias) v = vaddq_f32(v, vldrwq_z_f32(bias + c + 4 * b, lanes[b]));  // none adds nothing, not +0
    vstrwq_p_f32(out + c + 4 * b, mve_f32::clamp(v, p.act_min_f, p.act_max_f), lanes[b]);
  }
}

}  // namespace

void dwconv_f32_mve(const DwConvParams& p, const float* input, const float* weights, const float* bias, float* output) {
  const int32_t taps = p.k_h * p.k_w;
  if (!mve_f32::operands_exact(input, p.in_h * p.in_w * p.in_c, weights, taps * p.out_c, bias, p.out_c, taps,
                               p.act_min_f, p.act_max_f)) {
    dwconv_f32(p, input, weights, bias, output);
    return;
  }
  mve_f32::for_each_output_pixel(p, output, [&](int32_t iy0, int32_t ix0, detail::TapRange rows, detail::TapRange cols,
                                                float* out) {
    int32_t c = 0;
    for (; c + 8 <= p.out_c; c += 8) channel_blocks<2, false>(p, c, input, iy0, ix0, rows, cols, weights, bias, out);
    for (; c + 4 <= p.out_c; c += 4) channel_blocks<1, false>(p, c, input, iy0, ix0, rows, cols, weights, bias, out);
    if (c < p.out_c) channel_blocks<1, true>(p, c, input, iy0, ix0, rows, cols, weights, bias, out);
  });
}

}  // namespace mcuflow::kernels
