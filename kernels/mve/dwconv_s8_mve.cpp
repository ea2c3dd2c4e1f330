// Depthwise convolution (channel multiplier 1), int8, MVE: windows of up to kMveDwMaxTaps taps,
// any stride, dilation and padding; 16 channels at a time (kernels_mve.h describes the
// prepared input).
//
// A tap's products come from VMULLB/VMULLT (int8 x int8 -> int16, even and odd channels),
// widened by VMOVLB/VMOVLT into four int32 accumulators whose lanes hold channels
// {0,4,8,12}, {2,6,10,14}, {1,5,9,13} and {3,7,11,15} of the block (kMveDwFirstChannel): the
// channel table is prepared in that order, and VMOVNT narrows the results back into channel
// order. The bias has the input offset folded in over all taps, so taps in the padding
// read the input zero point instead of being skipped. Pixels in the reference's order
// (raster_order.h), so it may run in place wherever the reference may.
#include <type_traits>

#include "../reference/raster_order.h"
#include "mcuflow/kernels/kernels_mve.h"

namespace mcuflow::kernels {
namespace {

struct Accumulators {
  int32x4_t a0, a1, a2, a3;
};

// Assembly text shared by the blocks below. Operands: accumulators a0..a3, scratch q
// registers x, w, even, odd, the weight pointer w_at (post-incremented); TAP(at) and
// TAP_PAIR(at0, at1) name the core registers holding the taps' input addresses.
//
// One tap: products of x and w into even/odd int16 lanes.
#define MCUFLOW_DW_PRODUCTS(at)                 \
  "vldrb.8 %q[x], [%[" at "]]\n\t"             \
  "vldrb.8 %q[w], [%[w_at]], #16\n\t"          \
  "vmullb.s8 %q[even], %q[x], %q[w]\n\t"       \
  "vmullt.s8 %q[odd], %q[x], %q[w]\n\t"
// A second tap's products added in int16 (|x * w| <= 128 * 127 with w != -128, so two fit).
// Its input is loaded twice because VMULLT overwrites it and no q register is left.
#define MCUFLOW_DW_ADD_PRODUCTS(at)             \
  "vldrb.8 %q[x], [%[" at "]]\n\t"             \
  "vldrb.8 %q[w], [%[w_at]], #16\n\t"          \
  "vmullt.s8 %q[x], %q[x], %q[w]\n\t"          \
  "vadd.i16 %q[odd], %q[odd], %q[x]\n\t"       \
  "vldrb.8 %q[x], [%[" at "]]\n\t"             \
  "vmullb.s8 %q[x], %q[x], %q[w]\n\t"          \
  "vadd.i16 %q[even], %q[even], %q[x]\n\t"
// The int16 products widened into the accumulators (x as scratch).
#define MCUFLOW_DW_WIDEN                        \
  "vmovlb.s16 %q[x], %q[even]\n\t"             \
  "vadd.i32 %q[a0], %q[a0], %q[x]\n\t"         \
  "vmovlt.s16 %q[x], %q[even]\n\t"             \
  "vadd.i32 %q[a1], %q[a1], %q[x]\n\t"         \
  "vmovlb.s16 %q[x], %q[odd]\n\t"              \
  "vadd.i32 %q[a2], %q[a2], %q[x]\n\t"         \
  "vmovlt.s16 %q[x], %q[odd]\n\t"              \
  "vadd.i32 %q[a3], %q[a3], %q[x]\n\t"
#define MCUFLOW_DW_TAP(at) MCUFLOW_DW_PRODUCTS(at) MCUFLOW_DW_WIDEN
#define MCUFLOW_DW_TAP_PAIR(at0, at1) MCUFLOW_DW_PRODUCTS(at0) MCUFLOW_DW_ADD_PRODUCTS(at1) MCUFLOW_DW_WIDEN
#define MCUFLOW_DW_OUTPUTS                                                                             \
  [a0] "+w"(acc.a0), [a1] "+w"(acc.a1), [a2] "+w"(acc.a2), [a3] "+w"(acc.a3), [x] "=&w"(x), [w] "=&w"(w), \
      [even] "=&w"(even), [odd] "=&w"(odd), [w_at] "+r"(weights)

// The steps below are in assembly, loads included, so that the compiler neither hoists an
// unrolled window's loads nor reassociates its sums (both keep every tap alive at once and
// spill): four accumulators, x, w and the two int16 products fill the eight q registers.

// acc += x * w, widened, for the 16 input bytes at x_at and the next 16 weights.
inline void accumulate_tap(Accumulators& acc, const int8_t* x_at, const int8_t*& weights) {
  int8x16_t x, w;
  int16x8_t even, odd;
  asm(MCUFLOW_DW_TAP("x_at")
      : MCUFLOW_DW_OUTPUTS
      : [x_at] "r"(x_at), "m"(*reinterpret_cast<const int8_t(*)[kMveChunk]>(x_at)),
        "m"(*reinterpret_cast<const int8_t(*)[kMveChunk]>(weights)));
}

// Two taps, their products summed in int16 first, which halves the widening.
inline void accumulate_tap_pair(Accumulators& acc, const int8_t* x0_at, const int8_t* x1_at, const int8_t*& weights) {
  int8x16_t x, w;
  int16x8_t even, odd;
  asm(MCUFLOW_DW_TAP_PAIR("x0_at", "x1_at")
      : MCUFLOW_DW_OUTPUTS
      : [x0_at] "r"(x0_at), [x1_at] "r"(x1_at), "m"(*reinterpret_cast<const int8_t(*)[kMveChunk]>(x0_at)),
        "m"(*reinterpret_cast<const int8_t(*)[kMveChunk]>(x1_at)),
        "m"(*reinterpret_cast<const int8_t(*)[2 * kMveChunk]>(weights)));
}

// A whole 3x3 window inside the input, tap (ky, kx) at first + ky * row_step + kx * column_step:
// the addresses are formed here too (eight adds) rather than kept as nine pointers per block.
inline void accumulate_window_3x3(Accumulators& acc, const int8_t* first, int32_t row_step, int32_t column_step,
                                  const int8_t*& weights) {
  int8x16_t x, w;
  int16x8_t even, odd;
  const int8_t *at0, *at1, *row;
  asm("add %[at1], %[first], %[cs]\n\t" MCUFLOW_DW_TAP_PAIR("first", "at1")  // (0,0) (0,1)
      "add %[at0], %[at1], %[cs]\n\t"
      "add %[row], %[first], %[rs]\n\t" MCUFLOW_DW_TAP_PAIR("at0", "row")    // (0,2) (1,0)
      "add %[at0], %[row], %[cs]\n\t"
      "add %[at1], %[at0], %[cs]\n\t" MCUFLOW_DW_TAP_PAIR("at0", "at1")      // (1,1) (1,2)
      "add %[row], %[row], %[rs]\n\t"
      "add %[at0], %[row], %[cs]\n\t" MCUFLOW_DW_TAP_PAIR("row", "at0")      // (2,0) (2,1)
      "add %[at0], %[at0], %[cs]\n\t" MCUFLOW_DW_TAP("at0")                  // (2,2)
      : MCUFLOW_DW_OUTPUTS, [at0] "=&r"(at0), [at1] "=&r"(at1), [row] "=&r"(row)
      : [first] "r"(first), [rs] "r"(row_step), [cs] "r"(column_step), "m"(*first),
        "m"(*reinterpret_cast<const int8_t(*)[9 * kMveChunk]>(weights)));
}

#undef MCUFLOW_DW_PRODUCTS
#undef MCUFLOW_DW_ADD_PRODUCTS
#undef MCUFLOW_DW_WIDEN
#undef MCUFLOW_DW_TAP
#undef MCUFLOW_DW_TAP_PAIR
#undef MCUFLOW_DW_OUTPUTS

// Requantizes accumulator kAcc of a block.
template <int32_t kAcc>
int32x4_t requantize_accumulator(int32x4_t acc, const int32_t* table, const DwConvParams& p, int32x4_t act_min,
                                 int32x4_t act_max) {
  constexpr int32_t kRow = kMveDwGroup * 4, kLanes = 16 * kAcc;  // bytes
  return mve::requantize<kMveMultiplier * kRow + kLanes, kMveLeftShift * kRow + kLanes,
                         kMveMinusRightShift * kRow + kLanes>(acc, table, p.output_offset, act_min, act_max);
}

// Where the taps of a window entirely inside the input read their 16 channels.
struct InsideTaps {
  const int8_t* first;  // tap (0, 0)
  int32_t row_step, column_step;
  const int8_t* operator()(int32_t ky, int32_t kx) const { return first + ky * row_step + kx * column_step; }
};

// Where the taps of a window touching the padding read: per pixel, every tap's input pixel (or
// null in the padding), offset by the block's first channel; padding taps read the zero point.
struct PaddedTaps {
  const int8_t* const* pixel;  // [k_h * k_w]
  int32_t k_w, channel;
  const int8_t* zero_point_row;
  const int8_t* operator()(int32_t ky, int32_t kx) const {
    const int8_t* at = pixel[ky * k_w + kx];
    return at ? at + channel : zero_point_row;
  }
};

// One output pixel for the 16 channels (`channels` when kPartial) of one block. kKh/kKw are
// the window size when known at compile time (0: read from p), which unrolls the taps.
template <int32_t kKh, int32_t kKw, bool kPartial, typename Taps>
void pixel_block(const DwConvParams& p, const Taps& tap_input, const int8_t* weights, const int32_t* table,
                 int8_t* out, int32_t channels) {
  const int32_t k_h = kKh ? kKh : p.k_h, k_w = kKw ? kKw : p.k_w;
  Accumulators acc{vldrwq_s32(table), vldrwq_s32(table + 4), vldrwq_s32(table + 8), vldrwq_s32(table + 12)};
  alignas(16) int8_t partial[2][kMveChunk];  // a partial block's inputs, zero padded
  int32_t ky = 0, kx = 0;
  // The input of the next tap in (ky, kx) order, staged in partial[slot] for a partial block.
  auto next_tap = [&](int32_t slot) {
    const int8_t* x = tap_input(ky, kx);
    if (kPartial) {
      vstrbq_s8(partial[slot], vldrbq_z_s8(x, vctp8q(uint32_t(channels))));
      x = partial[slot];
    }
    if (++kx == k_w) kx = 0, ++ky;
    return x;
  };
  const int32_t taps = k_h * k_w;
  if constexpr (kKh == 3 && kKw == 3 && !kPartial && std::is_same_v<Taps, InsideTaps>) {
    accumulate_window_3x3(acc, tap_input.first, tap_input.row_step, tap_input.column_step, weights);
  } else {
    for (int32_t t = 0; t + 1 < taps; t += 2) {
      const int8_t* x0 = next_tap(0);
      accumulate_tap_pair(acc, x0, next_tap(1), weights);
    }
    if (taps % 2) accumulate_tap(acc, next_tap(0), weights);
  }
  // Narrowing keeps the low half of each lane, so VMOVNT alone interleaves two vectors:
  // channels 0, 2, 4 ... from accumulators 0 and 1, 1, 3, 5 ... from 2 and 3, then all.
  const int32x4_t act_min = vdupq_n_s32(p.act_min), act_max = vdupq_n_s32(p.act_max);
  const int16x8_t even = vmovntq_s32(vreinterpretq_s16_s32(requantize_accumulator<0>(acc.a0, table, p, act_min, act_max)),
                                     requantize_accumulator<1>(acc.a1, table, p, act_min, act_max));
  const int16x8_t odd = vmovntq_s32(vreinterpretq_s16_s32(requantize_accumulator<2>(acc.a2, table, p, act_min, act_max)),
                                    requantize_accumulator<3>(acc.a3, table, p, act_min, act_max));
  const int8x16_t y = vmovntq_s16(vreinterpretq_s8_s16(even), odd);
  if (kPartial) vstrbq_p_s8(out, y, vctp8q(uint32_t(channels)));
  else vstrbq_s8(out, y);
}

// Every block of one output pixel; make_taps(c) gives the taps of the block at channel c.
template <int32_t kKh, int32_t kKw, typename MakeTaps>
void pixel(const DwConvParams& p, const uint8_t* prepared, int8_t* out, MakeTaps make_taps) {
  const MveDwLayout layout{p.in_c, p.k_h * p.k_w};
  for (int32_t c = 0; c < p.in_c; c += kMveDwGroup, prepared += layout.block_bytes()) {
    const int32_t* table = reinterpret_cast<const int32_t*>(prepared);
    const int8_t* weights = reinterpret_cast<const int8_t*>(prepared + layout.table_bytes());
    if (c + kMveDwGroup <= p.in_c)
      pixel_block<kKh, kKw, false>(p, make_taps(c), weights, table, out + c, kMveDwGroup);
    else
      pixel_block<kKh, kKw, true>(p, make_taps(c), weights, table, out + c, p.in_c - c);
  }
}

template <int32_t kKh, int32_t kKw>
void dwconv(const DwConvParams& p, const int8_t* input, const uint8_t* prepared, int8_t* output) {
  alignas(16) int8_t zero_point_row[kMveChunk];
  vstrbq_s8(zero_point_row, vdupq_n_s8(int8_t(-p.input_offset)));
  const int8_t* padded_pixel[kMveDwMaxTaps];
  const int32_t row_step = p.dil_h * p.in_w * p.in_c, column_step = p.dil_w * p.in_c;
  // Outputs whose whole window lies inside the input: oy in [y_lo, y_hi), ox in [x_lo, x_hi).
  auto first_inside = [](int32_t pad, int32_t stride) { return (pad + stride - 1) / stride; };
  auto end_inside = [](int32_t in, int32_t pad, int32_t span, int32_t stride, int32_t out) {
    const int32_t end = in + pad >= span ? (in + pad - span) / stride + 1 : 0;
    return end < out ? end : out;
  };
  const int32_t y_lo = first_inside(p.pad_top, p.stride_h), x_lo = first_inside(p.pad_left, p.stride_w);
  const int32_t y_hi = end_inside(p.in_h, p.pad_top, (p.k_h - 1) * p.dil_h + 1, p.stride_h, p.out_h);
  const int32_t x_hi = end_inside(p.in_w, p.pad_left, (p.k_w - 1) * p.dil_w + 1, p.stride_w, p.out_w);
  // Locals, not p's fields: the output stores would make the compiler reload those.
  const int32_t out_w = p.out_w, out_c = p.out_c, in_w = p.in_w, in_c = p.in_c;
  const int32_t stride_h = p.stride_h, stride_w = p.stride_w, pad_top = p.pad_top, pad_left = p.pad_left;
  detail::for_each_output_pixel(p.out_h, out_w, input, output, [&](int32_t oy, int32_t ox) {
    int8_t* out = output + (oy * out_w + ox) * out_c;
    const int32_t iy0 = oy * stride_h - pad_top, ix0 = ox * stride_w - pad_left;
    if (oy >= y_lo && oy < y_hi && ox >= x_lo && ox < x_hi) {
      const int8_t* first = input + (iy0 * in_w + ix0) * in_c;
      pixel<kKh, kKw>(p, prepared, out, [&](int32_t c) { return InsideTaps{first + c, row_step, column_step}; });
      return;
    }
    for (int32_t ky = 0, t = 0; ky < p.k_h; ++ky) {
      for (int32_t kx = 0; kx < p.k_w; ++kx, ++t) {
        const int32_t iy = iy0 + ky * p.dil_h, ix = ix0 + kx * p.dil_w;
        const bool inside = iy >= 0 && iy < p.in_h && ix >= 0 && ix < p.in_w;
        padded_pixel[t] = inside ? input + (iy * p.in_w + ix) * p.in_c : nullptr;
      }
    }
    pixel<kKh, kKw>(p, prepared, out, [&](int32_t c) { return PaddedTaps{padded_pixel, p.k_w, c, zero_point_row}; });
  });
}

}  // namespace

void dwconv_s8_mve(const DwConvParams& p, const int8_t* input, const uint8_t* prepared, int8_t* output) {
  if (p.k_h == 3 && p.k_w == 3) dwconv<3, 3>(p, input, prepared, output);
  else dwconv<0, 0>(p, input, prepared, output);
}

}  // namespace mcuflow::kernels
