// 2-D convolution, float32, DSP tier on a core with an FPU: bit for bit conv_f32 (any kernel size,
// stride, dilation and padding; one group: the check refuses more). Four output channels per pass
// (VLDM of four weights per row, VMLA.F32 per product), two neighbouring output pixels per pass
// when their windows have the same valid taps (and out_c <= kHeldOutputs); each output sums its
// products in the reference's order (valid taps row by row, input channels within a tap). Whole
// windows of up to kGatheredDepth inputs are first copied into one run. Pixels forwards, a pass's
// outputs stored after its windows are read (f32_dsp_blocks.h).
#include "f32_dsp_blocks.h"

namespace mcuflow::kernels {
namespace {

// Windows of at most this many inputs that lie wholly inside the input are gathered into one
// contiguous run per pixel (2 KiB of stack for a pair): one pass over the weight rows per channel
// block instead of one per window row, the same products in the same order.
constexpr int32_t kGatheredDepth = 256;

// The window of kPixels output pixels from (oy's input row iy0, column ix0) on, the next pixel's
// one stride further, all with the valid taps rows x cols.
template <int kPixels>
void windows(const ConvParams& p, const float* input, const float* weights, const float* bias, int32_t iy0,
             int32_t ix0, detail::TapRange rows, detail::TapRange cols, float* out) {
  const int32_t depth = p.k_h * p.k_w * p.in_c, next_pixel = p.stride_w * p.in_c;
  float* outs[kPixels];
  for (int q = 0; q < kPixels; ++q) outs[q] = out + q * p.out_c;
  const auto window_runs = [&](auto run) {  // run(inputs of each pixel, weights offset, count)
    detail::for_each_window_run(p, input, iy0, ix0, rows, cols, [&](const float* in, int32_t at, int32_t n) {
      const float* x[kPixels];
      for (int q = 0; q < kPixels; ++q) x[q] = in + q * next_pixel;
      run(x, at, n);
    });
  };
  if (depth <= kGatheredDepth && rows.end - rows.begin == p.k_h && cols.end - cols.begin == p.k_w) {
    float gathered[kPixels][kGatheredDepth];  // input at weight offset `at` of each run lands at `at`
    window_runs([&](const float* const (&x)[kPixels], int32_t at, int32_t n) {
      for (int q = 0; q < kPixels; ++q) std::memcpy(gathered[q] + at, x[q], size_t(n) * sizeof(float));
    });
    const float* x[kPixels];
    for (int q = 0; q < kPixels; ++q) x[q] = gathered[q];
    dsp_f32::all_output_channels<kPixels>(p.out_c, depth, weights, bias, p.act_min_f, p.act_max_f, outs,
                                          [&](auto run) { run(x, 0, depth); });
    return;
  }
  dsp_f32::all_output_channels<kPixels>(p.out_c, depth, weights, bias, p.act_min_f, p.act_max_f, outs, window_runs);
}

}  // namespace

void conv_f32_dsp(const ConvParams& p, const float* input, const float* weights, const float* bias, float* output) {
  for (int32_t oy = 0; oy < p.out_h; ++oy) {
    const int32_t iy0 = oy * p.stride_h - p.pad_top;
    const detail::TapRange rows = detail::valid_taps(iy0, p.k_h, p.dil_h, p.in_h);
    for (int32_t ox = 0; ox < p.out_w;) {
      const int32_t ix0 = ox * p.stride_w - p.pad_left;
      const detail::TapRange cols = detail::valid_taps(ix0, p.k_w, p.dil_w, p.in_w);
      float* out = output + (oy * p.out_w + ox) * p.out_c;
      const detail::TapRange next =
          ox + 1 < p.out_w ? detail::valid_taps(ix0 + p.stride_w, p.k_w, p.dil_w, p.in_w) : detail::TapRange{0, -1};
      if (next.begin == cols.begin && next.end == cols.end && p.out_c <= dsp_f32::kHeldOutputs) {
        windows<2>(p, input, weights, bias, iy0, ix0, rows, cols, out);
        ox += 2;
      } else {
        windows<1>(p, input, weights, bias, iy0, ix0, rows, cols, out);
        ox += 1;
      }
    }
  }
}

}  // namespace mcuflow::kernels
