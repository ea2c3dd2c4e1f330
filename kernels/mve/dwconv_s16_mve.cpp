// Depthwise convolution (channel multiplier 1), int16 activations and int8 weights, MVE: per
// output pixel, its valid taps' input and weight pointers listed once (at most kMveDwMaxTaps:
// dwconv_s16_mve_refusal); then sixteen channels per step (the last 1 ... 15 eight at a time),
// each tap and eight channels one VLDRH, one VLDRB (weights widened to int16 lanes) and VMULLB /
// VMULLT into the even and odd channels' int32 accumulators, narrowed back in channel order
// (VMOVNB / VMOVNT) after the exact VRMULH output stage of mve_s16_blocks.h. Taken when the whole call provably fits int32; otherwise the
// reference's int64 walk.
#include "mcuflow/kernels/kernels.h"
#include "mve_s16_blocks.h"

namespace mcuflow::kernels {
namespace {

// One valid tap of the current pixel: where the next eight channels' inputs and weights are.
struct TapPointers {
  const int16_t* in;
  const int8_t* w;
};
static_assert(sizeof(TapPointers) == 8, "the assembly steps through the taps with LDRD / STRD");

// `blocks` blocks of sixteen channels of one pixel from the taps' pointers (each advanced past
// the blocks: the last channels follow from there), the two halves' even / odd entries of the
// channel tables from `table` on. All in assembly: GCC keeps the tap loop's pointers on the
// stack otherwise. Per tap, both pointers come from the list and go back advanced, each weight
// vector feeding VMULLB and VMULLT (15 instructions per tap and 16 channels); a window with no
// valid tap (all padding) leaves the bias. The sums take q0-q3, so the clamp's bounds come in
// core registers.
void sixteen_channel_blocks(TapPointers* taps, int32_t count, int32_t blocks, const int32_t* table, int16_t* out,
                            int32_t output_offset, int32_t act_min, int32_t act_max) {
  asm volatile(
      "1:\n\t"
      "vldrw.32 q0, [%[table]]\n\t"  // the first half's even channels' bias
      "vldrw.32 q1, [%[table], #16]\n\t"  // its odd channels'
      "vldrw.32 q2, [%[table], #32]\n\t"  // the second half's
      "vldrw.32 q3, [%[table], #48]\n\t"
      "mov r0, %[taps]\n\t"
      "wls lr, %[count], 3f\n"
      "2:\n\t"
      "ldrd r2, r3, [r0]\n\t"
      "vldrh.16 q7, [r2, #16]\n\t"
      "vldrh.16 q4, [r2], #32\n\t"
      "vldrb.s16 q5, [r3], #16\n\t"
      "vmullb.s16 q6, q4, q5\n\t"
      "vadd.i32 q0, q0, q6\n\t"
      "vmullt.s16 q6, q4, q5\n\t"
      "vadd.i32 q1, q1, q6\n\t"
      "vldrb.s16 q5, [r3, #-8]\n\t"
      "vmullb.s16 q6, q7, q5\n\t"
      "vadd.i32 q2, q2, q6\n\t"
      "vmullt.s16 q6, q7, q5\n\t"
      "vadd.i32 q3, q3, q6\n\t"
      "strd r2, r3, [r0], #8\n\t"
      "le lr, 2b\n"
      "3:\n\t"
      "vldrw.32 q4, [%[table], #256]\n\t"  // the factors (S16ChannelTables)
      "vrmulh.s32 q0, q0, q4\n\t"
      "vldrw.32 q4, [%[table], #272]\n\t"
      "vrmulh.s32 q1, q1, q4\n\t"
      "vldrw.32 q4, [%[table], #288]\n\t"
      "vrmulh.s32 q2, q2, q4\n\t"
      "vldrw.32 q4, [%[table], #304]\n\t"
      "vrmulh.s32 q3, q3, q4\n\t"
      "vadd.i32 q0, q0, %[offset]\n\t"
      "vadd.i32 q1, q1, %[offset]\n\t"
      "vadd.i32 q2, q2, %[offset]\n\t"
      "vadd.i32 q3, q3, %[offset]\n\t"
      "vdup.32 q4, %[lo]\n\t"
      "vdup.32 q5, %[hi]\n\t"
      "vmax.s32 q0, q0, q4\n\t"
      "vmax.s32 q1, q1, q4\n\t"
      "vmax.s32 q2, q2, q4\n\t"
      "vmax.s32 q3, q3, q4\n\t"
      "vmin.s32 q0, q0, q5\n\t"
      "vmin.s32 q1, q1, q5\n\t"
      "vmin.s32 q2, q2, q5\n\t"
      "vmin.s32 q3, q3, q5\n\t"
      "vmovnb.i32 q6, q0\n\t"
      "vmovnt.i32 q6, q1\n\t"
      "vstrh.16 q6, [%[out]], #16\n\t"
      "vmovnb.i32 q7, q2\n\t"
      "vmovnt.i32 q7, q3\n\t"
      "vstrh.16 q7, [%[out]], #16\n\t"
      "adds %[table], %[table], #64\n\t"
      "subs %[blocks], %[blocks], #1\n\t"
      "bne 1b"
      : [table] "+r"(table), [out] "+r"(out), [blocks] "+r"(blocks)
      : [taps] "r"(taps), [count] "r"(count), [offset] "r"(output_offset), [lo] "r"(act_min), [hi] "r"(act_max)
      : "r0", "r2", "r3", "lr", "q0", "q1", "q2", "q3", "q4", "q5", "q6", "q7", "cc", "memory");
}

}  // namespace

void dwconv_s16_mve(const DwConvParams& p, const int16_t* input, const int8_t* weights, const int64_t* bias,
                    const int32_t* multipliers, const int32_t* shifts, int16_t* output) {
  if (!s16_depthwise_fits_int32(p, weights, bias, shifts)) {
    dwconv_s16(p, input, weights, bias, multipliers, shifts, output);
    return;
  }
  const DwConvParams q = p;  // a copy the compiler may keep in registers across the stores
  const int32_t tap_step = q.dil_w * q.in_c;
  mve::S16ChannelTables t;
  TapPointers taps[kMveDwMaxTaps];
  for (int32_t g = 0; g < q.out_c; g += mve::kS16ChannelGroup) {
    const int32_t n = q.out_c - g < mve::kS16ChannelGroup ? q.out_c - g : mve::kS16ChannelGroup;
    // Entry e of a block of eight: its even channels' lanes, then its odd channels'.
    for (int32_t e = 0; e < (n + 7) / 8 * 8; ++e) {
      const int32_t c = g + e / 8 * 8 + 2 * (e % 4) + (e % 8) / 4;
      t.bias[e] = c < q.out_c && bias ? int32_t(bias[c]) : 0;
      t.factors[e] = c < q.out_c ? s16_rounding_factor(multipliers[c], shifts[c]) : 0;
    }
    for (int32_t oy = 0; oy < q.out_h; ++oy) {
      const int32_t iy0 = oy * q.stride_h - q.pad_top;
      const detail::TapRange rows = detail::valid_taps(iy0, q.k_h, q.dil_h, q.in_h);
      for (int32_t ox = 0; ox < q.out_w; ++ox) {
        const int32_t ix0 = ox * q.stride_w - q.pad_left;
        const detail::TapRange cols = detail::valid_taps(ix0, q.k_w, q.dil_w, q.in_w);
        int32_t count = 0;
        for (int32_t ky = rows.begin; ky < rows.end; ++ky) {
          const int16_t* in = input + ((iy0 + ky * q.dil_h) * q.in_w + ix0 + cols.begin * q.dil_w) * q.in_c + g;
          const int8_t* w = weights + (ky * q.k_w + cols.begin) * q.out_c + g;
          for (int32_t kx = cols.begin; kx < cols.end; ++kx, in += tap_step, w += q.out_c) taps[count++] = {in, w};
        }
        int16_t* out = output + (oy * q.out_w + ox) * q.out_c + g;
        const int32_t whole = n / 16;
        if (whole > 0) sixteen_channel_blocks(taps, count, whole, t.bias, out, q.out.output_offset, q.out.act_min,
                                              q.out.act_max);
        // The last 1 ... 15 channels, eight at a time (the taps' pointers are at the first of
        // them): lanes past the last channel load zeros and are not stored.
        for (int32_t c = 16 * whole; c < n; c += 8) {
          const int32_t d = c - 16 * whole;
          const mve_pred16_t lanes = vctp16q(uint32_t(n - c));
          int32x4_t even = vldrwq_s32(t.bias + c), odd = vldrwq_s32(t.bias + c + 4);
          for (int32_t k = 0; k < count; ++k) {
            const int16x8_t x = vldrhq_z_s16(taps[k].in + d, lanes), wx = vldrbq_z_s16(taps[k].w + d, lanes);
            even = vaddq_s32(even, vmullbq_int_s16(x, wx));
            odd = vaddq_s32(odd, vmulltq_int_s16(x, wx));
          }
          even = mve::requantize_exact(even, vldrwq_s32(t.factors + c), q.out);
          odd = mve::requantize_exact(odd, vldrwq_s32(t.factors + c + 4), q.out);
          vstrhq_p_s16(out + c, vmovntq_s32(vmovnbq_s32(vdupq_n_s16(0), even), odd), lanes);
        }
      }
    }
  }
}

}  // namespace mcuflow::kernels
