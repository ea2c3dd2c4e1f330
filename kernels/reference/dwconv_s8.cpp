// Depthwise convolution, int8 (TFLite int8 per-channel depthwise semantics).
// Weights [k_h][k_w][out_c]; output channel oc = ic * ch_mult + m reads input channel ic.
#include "mcuflow/kernels/arith.h"
#include "mcuflow/kernels/kernels.h"
#include "raster_order.h"
#include "window.h"

namespace mcuflow::kernels {
namespace {

// Output channels are computed a block at a time: the block's accumulators stay in registers
// while the window's taps stream through, each tap a run of channels contiguous in the input
// (NHWC) and in the weights. Small enough for the stack of the smallest boards.
constexpr int32_t kChannelBlock = 16;

// Adds the window taps of output channels [oc0, oc0 + n) to acc. kOneToOne (ch_mult == 1):
// channel oc reads input channel oc, which lets the channel loop run on contiguous bytes.
template <bool kOneToOne>
void accumulate_window(const DwConvParams& p, const int8_t* input, const int8_t* weights, int32_t iy0, int32_t ix0,
                       detail::TapRange rows, detail::TapRange cols, int32_t oc0, int32_t n, int32_t* acc) {
  const int16_t offset = static_cast<int16_t>(p.input_offset);  // in [-127, 128]: fits int16 (see dot_s8)
  for (int32_t ky = rows.begin; ky < rows.end; ++ky) {
    for (int32_t kx = cols.begin; kx < cols.end; ++kx) {
      const int8_t* in = input + ((iy0 + ky * p.dil_h) * p.in_w + ix0 + kx * p.dil_w) * p.in_c;
      const int8_t* w = weights + (ky * p.k_w + kx) * p.out_c + oc0;
      for (int32_t j = 0; j < n; ++j) {
        const int8_t x = kOneToOne ? in[oc0 + j] : in[(oc0 + j) / p.ch_mult];
        // |x + offset| <= 255 and |w| <= 128: the product fits int16 (16-bit multiplies)
        acc[j] += static_cast<int16_t>(static_cast<int16_t>(x + offset) * static_cast<int16_t>(w[j]));
      }
    }
  }
}

}  // namespace

void dwconv_s8(const DwConvParams& p, const int8_t* input, const int8_t* weights, const int32_t* bias,
               const int32_t* multipliers, const int32_t* shifts, int8_t* output) {
  detail::for_each_output_pixel(p.out_h, p.out_w, input, output, [&](int32_t oy, int32_t ox) {
    const int32_t iy0 = oy * p.stride_h - p.pad_top;
    const int32_t ix0 = ox * p.stride_w - p.pad_left;
    const detail::TapRange rows = detail::valid_taps(iy0, p.k_h, p.dil_h, p.in_h);
    const detail::TapRange cols = detail::valid_taps(ix0, p.k_w, p.dil_w, p.in_w);
    int8_t* out = output + (oy * p.out_w + ox) * p.out_c;
    for (int32_t oc0 = 0; oc0 < p.out_c; oc0 += kChannelBlock) {
      const int32_t n = p.out_c - oc0 < kChannelBlock ? p.out_c - oc0 : kChannelBlock;
      int32_t acc[kChannelBlock] = {};
      if (p.ch_mult != 1) {
        accumulate_window<false>(p, input, weights, iy0, ix0, rows, cols, oc0, n, acc);
      } else if (n == kChannelBlock) {  // a constant width keeps the accumulators in registers
        accumulate_window<true>(p, input, weights, iy0, ix0, rows, cols, oc0, kChannelBlock, acc);
      } else {
        accumulate_window<true>(p, input, weights, iy0, ix0, rows, cols, oc0, n, acc);
      }
      for (int32_t j = 0; j < n; ++j) {
        const int32_t oc = oc0 + j;
        int32_t sum = acc[j];
        if (bias) sum += bias[oc];
        sum = multiply_by_quantized_multiplier(sum, multipliers[oc], shifts[oc]) + p.out.output_offset;
        out[oc] = static_cast<int8_t>(clamp_i32(sum, p.out.act_min, p.out.act_max));
      }
    }
  });
}

}  // namespace mcuflow::kernels
