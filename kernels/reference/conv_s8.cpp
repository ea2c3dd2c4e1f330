// 2-D convolution, int8 (TFLite int8 per-channel conv semantics), grouped or not. Weights OHWI.
#include "mcuflow/kernels/arith.h"
#include "mcuflow/kernels/kernels.h"
#include "raster_order.h"
#include "window.h"

namespace mcuflow::kernels {
namespace {

// A window of at most this many elements is first gathered into one contiguous column, the input
// offset added and padding taps set to 0 (they contribute nothing): each output channel is then
// one dot product over the whole window, however short its rows (DS-CNN's first layer: 10x4
// taps of one channel), and the input is widened once for all output channels. Small enough
// for the stack of the smallest boards.
constexpr int32_t kColumnElements = 64;

// The window's `channels` channels from `input` (a group's first channel; pixels in_c apart).
void gather_window(const ConvParams& p, const int8_t* input, int32_t channels, int32_t iy0, int32_t ix0,
                   int16_t* column) {
  const int16_t offset = static_cast<int16_t>(p.input_offset);  // in [-127, 128] (see dot_s8)
  for (int32_t ky = 0; ky < p.k_h; ++ky) {
    const int32_t iy = iy0 + ky * p.dil_h;
    for (int32_t kx = 0; kx < p.k_w; ++kx) {
      const int32_t ix = ix0 + kx * p.dil_w;
      const bool inside = iy >= 0 && iy < p.in_h && ix >= 0 && ix < p.in_w;
      const int8_t* in = input + (iy * p.in_w + ix) * p.in_c;
      for (int32_t ic = 0; ic < channels; ++ic) *column++ = inside ? static_cast<int16_t>(in[ic] + offset) : 0;
    }
  }
}

}  // namespace

void conv_s8(const ConvParams& p, const int8_t* input, const int8_t* weights, const int32_t* bias,
             const int32_t* multipliers, const int32_t* shifts, int8_t* output) {
  const int32_t group_in = p.in_c / p.groups, group_out = p.out_c / p.groups;
  const int32_t window = p.k_h * p.k_w * group_in;  // weights per output channel
  detail::for_each_output_pixel(p.out_h, p.out_w, input, output, [&](int32_t oy, int32_t ox) {
    const int32_t iy0 = oy * p.stride_h - p.pad_top;
    const int32_t ix0 = ox * p.stride_w - p.pad_left;
    int8_t* out = output + (oy * p.out_w + ox) * p.out_c;
    auto store = [&](int32_t oc, int32_t acc) {
      if (bias) acc += bias[oc];
      acc = multiply_by_quantized_multiplier(acc, multipliers[oc], shifts[oc]) + p.out.output_offset;
      out[oc] = static_cast<int8_t>(clamp_i32(acc, p.out.act_min, p.out.act_max));
    };
    if (window <= kColumnElements) {
      int16_t column[kColumnElements];
      for (int32_t oc = 0, g = 0; g < p.groups; ++g) {
        gather_window(p, input + g * group_in, group_in, iy0, ix0, column);
        for (const int32_t end = oc + group_out; oc < end; ++oc)
          store(oc, detail::dot_s16_s8(column, weights + oc * window, window));
      }
      return;
    }
    const detail::TapRange rows = detail::valid_taps(iy0, p.k_h, p.dil_h, p.in_h);
    const detail::TapRange cols = detail::valid_taps(ix0, p.k_w, p.dil_w, p.in_w);
    // Without horizontal dilation or groups the valid taps of a window row are one run of
    // channels, contiguous in the input (NHWC) and in the weights (OHWI): one dot product per row.
    const int32_t run_taps = p.dil_w == 1 && p.groups == 1 ? cols.end - cols.begin : 1;
    for (int32_t oc = 0; oc < p.out_c; ++oc) {
      const int8_t* group_input = input + (p.groups == 1 ? 0 : oc / group_out * group_in);
      int32_t acc = 0;
      for (int32_t ky = rows.begin; ky < rows.end; ++ky) {
        const int32_t in_row = (iy0 + ky * p.dil_h) * p.in_w + ix0;
        const int32_t w_row = (oc * p.k_h + ky) * p.k_w;
        for (int32_t kx = cols.begin; kx < cols.end; kx += run_taps) {
          acc += detail::dot_s8(group_input + (in_row + kx * p.dil_w) * p.in_c, weights + (w_row + kx) * group_in,
                                run_taps * group_in, p.input_offset);
        }
      }
      store(oc, acc);
    }
  });
}

}  // namespace mcuflow::kernels
