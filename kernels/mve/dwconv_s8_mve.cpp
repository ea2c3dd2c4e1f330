// Depthwise convolution (channel multiplier 1), int8, MVE: windows of up to kMveDwMaxTaps taps,
// any stride, dilation and padding; 16 channels at a time (kernels_mve.h describes the
// prepared input).
//
// A tap's products come from VMULLB/VMULLT (int8 x int8 -> int16, even and odd channels),
// widened by VMOVLB/VMOVLT into four int32 accumulators whose lanes hold channels
// {0,4,8,12}, {2,6,10,14}, {1,5,9,13} and {3,7,11,15} of the block (kMveDwFirstChannel): the
// channel table is prepared in that order, and narrowing puts the results back into channel
// order. The bias has the input offset folded in over all taps, so taps in the padding
// read the input zero point (the prepared zero point row) instead of being skipped. Pixels in
// the reference's order (raster_order.h), every block of a pixel before the next pixel, so it
// may run in place wherever the reference may.
//
// A whole block of a 3x3 window is one assembly block (dw3_block): taps, requantization,
// narrowing and the store, every constant it needs addressed from the block's prepared bytes.
// docs/kernels_dsp.md counts its instructions and says why it is exact.
#include <type_traits>

#include "../reference/raster_order.h"
#include "mcuflow/kernels/arith.h"
#include "mcuflow/kernels/kernels_mve.h"

namespace mcuflow::kernels {
namespace {

struct Accumulators {
  int32x4_t a0, a1, a2, a3;
};

// Assembly text shared by the blocks below. Operands: accumulators a0..a3, scratch q
// registers x, w, even, odd; TAP(at, load_w) and TAP_PAIR(at0, at1, load_w0, load_w1) name
// the core registers holding the taps' input addresses and the text loading each tap's
// weights into w.
//
// One tap: products of x and w into even/odd int16 lanes.
#define MCUFLOW_DW_PRODUCTS(at, load_w)         \
  "vldrb.8 %q[x], [%[" at "]]\n\t" load_w      \
  "vmullb.s8 %q[even], %q[x], %q[w]\n\t"       \
  "vmullt.s8 %q[odd], %q[x], %q[w]\n\t"
// A second tap's products added in int16 (|x * w| <= 128 * 127 with w != -128, so two fit).
// Its input is loaded twice because VMULLT overwrites it and no q register is left.
#define MCUFLOW_DW_ADD_PRODUCTS(at, load_w)     \
  "vldrb.8 %q[x], [%[" at "]]\n\t" load_w      \
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
#define MCUFLOW_DW_TAP(at, load_w) MCUFLOW_DW_PRODUCTS(at, load_w) MCUFLOW_DW_WIDEN
#define MCUFLOW_DW_TAP_PAIR(at0, at1, load_w0, load_w1) \
  MCUFLOW_DW_PRODUCTS(at0, load_w0) MCUFLOW_DW_ADD_PRODUCTS(at1, load_w1) MCUFLOW_DW_WIDEN
#define MCUFLOW_DW_NEXT_WEIGHTS "vldrb.8 %q[w], [%[w_at]], #16\n\t"
#define MCUFLOW_DW_STREAM_OUTPUTS                                                                      \
  [a0] "+w"(acc.a0), [a1] "+w"(acc.a1), [a2] "+w"(acc.a2), [a3] "+w"(acc.a3), [x] "=&w"(x), [w] "=&w"(w), \
      [even] "=&w"(even), [odd] "=&w"(odd), [w_at] "+r"(weights)

// The steps below are in assembly, loads included, so that the compiler neither hoists an
// unrolled window's loads nor reassociates its sums (both keep every tap alive at once and
// spill): four accumulators, x, w and the two int16 products fill the eight q registers.

// acc += x * w, widened, for the 16 input bytes at x_at and the next 16 weights.
inline void accumulate_tap(Accumulators& acc, const int8_t* x_at, const int8_t*& weights) {
  int8x16_t x, w;
  int16x8_t even, odd;
  asm(MCUFLOW_DW_TAP("x_at", MCUFLOW_DW_NEXT_WEIGHTS)
      : MCUFLOW_DW_STREAM_OUTPUTS
      : [x_at] "r"(x_at), "m"(*reinterpret_cast<const int8_t(*)[kMveChunk]>(x_at)),
        "m"(*reinterpret_cast<const int8_t(*)[kMveChunk]>(weights)));
}

// Two taps, their products summed in int16 first, which halves the widening.
inline void accumulate_tap_pair(Accumulators& acc, const int8_t* x0_at, const int8_t* x1_at, const int8_t*& weights) {
  int8x16_t x, w;
  int16x8_t even, odd;
  asm(MCUFLOW_DW_TAP_PAIR("x0_at", "x1_at", MCUFLOW_DW_NEXT_WEIGHTS, MCUFLOW_DW_NEXT_WEIGHTS)
      : MCUFLOW_DW_STREAM_OUTPUTS
      : [x0_at] "r"(x0_at), [x1_at] "r"(x1_at), "m"(*reinterpret_cast<const int8_t(*)[kMveChunk]>(x0_at)),
        "m"(*reinterpret_cast<const int8_t(*)[kMveChunk]>(x1_at)),
        "m"(*reinterpret_cast<const int8_t(*)[2 * kMveChunk]>(weights)));
}

// --- a whole block of a 3x3 window in one assembly block ---------------------------------
// Byte offsets in a block's prepared bytes (kernels_mve.h): table rows of kMveDwGroup int32
// (bias' at 0, multipliers at 64, left shifts at 128, minus right shifts at 192), then the
// nine taps' weights at 256 + 16 * tap, all within VLDRW's immediate range.
#define MCUFLOW_DW3_W(at) "vldrw.32 %q[w], [%[blk], #" at "]\n\t"
#define MCUFLOW_DW3_BIAS                      \
  "vldrw.32 %q[a0], [%[blk]]\n\t"            \
  "vldrw.32 %q[a1], [%[blk], #16]\n\t"       \
  "vldrw.32 %q[a2], [%[blk], #32]\n\t"       \
  "vldrw.32 %q[a3], [%[blk], #48]\n\t"
// A window inside the input, tap (ky, kx) at first + ky * rs + kx * cs: eight adds.
#define MCUFLOW_DW3_INSIDE_TAPS                                                                      \
  "add %[at1], %[first], %[cs]\n\t" MCUFLOW_DW_TAP_PAIR("first", "at1", MCUFLOW_DW3_W("256"),        \
                                                        MCUFLOW_DW3_W("272"))     /* (0,0) (0,1) */  \
  "add %[at0], %[at1], %[cs]\n\t"                                                                    \
  "add %[row], %[first], %[rs]\n\t" MCUFLOW_DW_TAP_PAIR("at0", "row", MCUFLOW_DW3_W("288"),          \
                                                        MCUFLOW_DW3_W("304"))     /* (0,2) (1,0) */  \
  "add %[at0], %[row], %[cs]\n\t"                                                                    \
  "add %[at1], %[at0], %[cs]\n\t" MCUFLOW_DW_TAP_PAIR("at0", "at1", MCUFLOW_DW3_W("320"),            \
                                                      MCUFLOW_DW3_W("336"))       /* (1,1) (1,2) */  \
  "add %[row], %[row], %[rs]\n\t"                                                                    \
  "add %[at0], %[row], %[cs]\n\t" MCUFLOW_DW_TAP_PAIR("row", "at0", MCUFLOW_DW3_W("352"),            \
                                                      MCUFLOW_DW3_W("368"))       /* (2,0) (2,1) */  \
  "add %[at0], %[at0], %[cs]\n\t" MCUFLOW_DW_TAP("at0", MCUFLOW_DW3_W("384"))    /* (2,2) */
// A window touching the padding: tap t at taps[t] + c (taps[t] an input pixel or the zero
// point row).
#define MCUFLOW_DW3_TAP_AT(reg, t) "ldr %[" reg "], [%[taps], #" t "]\n\tadd %[" reg "], %[" reg "], %[c]\n\t"
#define MCUFLOW_DW3_TABLE_TAPS                                                                              \
  MCUFLOW_DW3_TAP_AT("at0", "0") MCUFLOW_DW3_TAP_AT("at1", "4")                                            \
  MCUFLOW_DW_TAP_PAIR("at0", "at1", MCUFLOW_DW3_W("256"), MCUFLOW_DW3_W("272"))                            \
  MCUFLOW_DW3_TAP_AT("at0", "8") MCUFLOW_DW3_TAP_AT("at1", "12")                                           \
  MCUFLOW_DW_TAP_PAIR("at0", "at1", MCUFLOW_DW3_W("288"), MCUFLOW_DW3_W("304"))                            \
  MCUFLOW_DW3_TAP_AT("at0", "16") MCUFLOW_DW3_TAP_AT("at1", "20")                                          \
  MCUFLOW_DW_TAP_PAIR("at0", "at1", MCUFLOW_DW3_W("320"), MCUFLOW_DW3_W("336"))                            \
  MCUFLOW_DW3_TAP_AT("at0", "24") MCUFLOW_DW3_TAP_AT("at1", "28")                                          \
  MCUFLOW_DW_TAP_PAIR("at0", "at1", MCUFLOW_DW3_W("352"), MCUFLOW_DW3_W("368"))                            \
  MCUFLOW_DW3_TAP_AT("at0", "32") MCUFLOW_DW_TAP("at0", MCUFLOW_DW3_W("384"))
// Requantization of accumulator a: the general steps (mve::requantize's), or the ones for an
// op whose every channel shifts right and none left (RequantKind::kRightShiftsOnly).
#define MCUFLOW_DW3_ROW(row_at) "vldrw.32 %q[x], [%[blk], #" row_at "]\n\t"
#define MCUFLOW_DW3_REQUANT(a, lshift_at, mult_at, rshift_at)                               \
  MCUFLOW_DW3_ROW(lshift_at) MCUFLOW_MVE_RQ_SHIFT_LEFT("%q[" a "]", "%q[x]")               \
  MCUFLOW_DW3_ROW(mult_at) MCUFLOW_MVE_RQ_MULTIPLY("%q[" a "]", "%q[x]")                   \
  MCUFLOW_DW3_ROW(rshift_at) MCUFLOW_MVE_RQ_SHIFT_RIGHT("%q[" a "]", "%q[x]", "%q[w]")
#define MCUFLOW_DW3_REQUANT_RIGHT(a, lshift_at, mult_at, rshift_at)                         \
  MCUFLOW_DW3_ROW(mult_at) MCUFLOW_MVE_RQ_MULTIPLY("%q[" a "]", "%q[x]")                   \
  MCUFLOW_DW3_ROW(rshift_at) MCUFLOW_MVE_RQ_SHIFT_RIGHT_ALL("%q[" a "]", "%q[x]", "%q[w]")
#define MCUFLOW_DW3_REQUANT_ALL(step)                                                       \
  step("a0", "128", "64", "192") step("a1", "144", "80", "208") step("a2", "160", "96", "224") \
      step("a3", "176", "112", "240")
// Saturating narrowing to int16 (channel order: even channels in a0, odd in a2), the output
// offset added with saturation, narrowing to int8 (all 16 channels in order in a0). Saturation
// clamps to int8 exactly where the reference's int32 sum would leave [-128, 127].
#define MCUFLOW_DW3_NARROW                     \
  "vqmovnb.s32 %q[a0], %q[a0]\n\t"            \
  "vqmovnt.s32 %q[a0], %q[a1]\n\t"            \
  "vqmovnb.s32 %q[a2], %q[a2]\n\t"            \
  "vqmovnt.s32 %q[a2], %q[a3]\n\t"            \
  "vqadd.s16 %q[a0], %q[a0], %[offset]\n\t"   \
  "vqadd.s16 %q[a2], %q[a2], %[offset]\n\t"   \
  "vqmovnb.s16 %q[a0], %q[a0]\n\t"            \
  "vqmovnt.s16 %q[a0], %q[a2]\n\t"
// The activation range, when narrower than int8.
#define MCUFLOW_DW3_CLAMP                      \
  "vdup.8 %q[x], %[lo]\n\t"                   \
  "vmax.s8 %q[a0], %q[a0], %q[x]\n\t"         \
  "vdup.8 %q[x], %[hi]\n\t"                   \
  "vmin.s8 %q[a0], %q[a0], %q[x]\n\t"
#define MCUFLOW_DW3_STORE "vstrb.8 %q[a0], [%[out]]\n\t"
#define MCUFLOW_DW3_OUTPUTS                                                                            \
  [a0] "=&w"(a0), [a1] "=&w"(a1), [a2] "=&w"(a2), [a3] "=&w"(a3), [x] "=&w"(x), [w] "=&w"(w),         \
      [even] "=&w"(even), [odd] "=&w"(odd), [at0] "=&r"(at0), [at1] "=&r"(at1)

// How an op's requantization may be shortened (decided once per op from its table).
enum class RequantKind {
  kGeneral,          // any shifts and activation range
  kRightShiftsOnly,  // every channel shifts right (so none left), activation range [-128, 127]
};

// Where the taps of a window read: entirely inside the input, tap (ky, kx) at
// first + ky * row_step + kx * column_step; or from per-tap pointers (an input pixel, or the
// zero point row for a padding tap), offset by the block's first channel.
struct InsideTaps {
  const int8_t* first;  // tap (0, 0)
  int32_t row_step, column_step;
  const int8_t* operator()(int32_t ky, int32_t kx) const { return first + ky * row_step + kx * column_step; }
};
struct PointedTaps {
  const int8_t* const* pixel;  // [k_h * k_w]
  int32_t k_w, channel;
  const int8_t* operator()(int32_t ky, int32_t kx) const { return pixel[ky * k_w + kx] + channel; }
};

// The output bytes of one whole block (16 channels) of a 3x3 window; blk: the block's prepared bytes.
template <RequantKind kKind>
inline void dw3_block(const uint8_t* blk, const InsideTaps& taps, int8_t* out, int32_t offset, int32_t lo,
                      int32_t hi) {
  int32x4_t a0, a1, a2, a3;
  int8x16_t x, w;
  int16x8_t even, odd;
  const int8_t *at0, *at1, *row;
  if constexpr (kKind == RequantKind::kRightShiftsOnly) {
    asm volatile(MCUFLOW_DW3_BIAS MCUFLOW_DW3_INSIDE_TAPS MCUFLOW_DW3_REQUANT_ALL(MCUFLOW_DW3_REQUANT_RIGHT)
                     MCUFLOW_DW3_NARROW MCUFLOW_DW3_STORE
                 : MCUFLOW_DW3_OUTPUTS, [row] "=&r"(row)
                 : [blk] "r"(blk), [first] "r"(taps.first), [rs] "r"(taps.row_step), [cs] "r"(taps.column_step),
                   [out] "r"(out), [offset] "r"(offset)
                 : "memory");
  } else {
    asm volatile(MCUFLOW_DW3_BIAS MCUFLOW_DW3_INSIDE_TAPS MCUFLOW_DW3_REQUANT_ALL(MCUFLOW_DW3_REQUANT)
                     MCUFLOW_DW3_NARROW MCUFLOW_DW3_CLAMP MCUFLOW_DW3_STORE
                 : MCUFLOW_DW3_OUTPUTS, [row] "=&r"(row)
                 : [blk] "r"(blk), [first] "r"(taps.first), [rs] "r"(taps.row_step), [cs] "r"(taps.column_step),
                   [out] "r"(out), [offset] "r"(offset), [lo] "r"(lo), [hi] "r"(hi)
                 : "memory");
  }
}

template <RequantKind kKind>
inline void dw3_block(const uint8_t* blk, const PointedTaps& taps, int8_t* out, int32_t offset, int32_t lo,
                      int32_t hi) {
  int32x4_t a0, a1, a2, a3;
  int8x16_t x, w;
  int16x8_t even, odd;
  const int8_t *at0, *at1;
  if constexpr (kKind == RequantKind::kRightShiftsOnly) {
    asm volatile(MCUFLOW_DW3_BIAS MCUFLOW_DW3_TABLE_TAPS MCUFLOW_DW3_REQUANT_ALL(MCUFLOW_DW3_REQUANT_RIGHT)
                     MCUFLOW_DW3_NARROW MCUFLOW_DW3_STORE
                 : MCUFLOW_DW3_OUTPUTS
                 : [blk] "r"(blk), [taps] "r"(taps.pixel), [c] "r"(taps.channel), [out] "r"(out),
                   [offset] "r"(offset)
                 : "memory");
  } else {
    asm volatile(MCUFLOW_DW3_BIAS MCUFLOW_DW3_TABLE_TAPS MCUFLOW_DW3_REQUANT_ALL(MCUFLOW_DW3_REQUANT)
                     MCUFLOW_DW3_NARROW MCUFLOW_DW3_CLAMP MCUFLOW_DW3_STORE
                 : MCUFLOW_DW3_OUTPUTS
                 : [blk] "r"(blk), [taps] "r"(taps.pixel), [c] "r"(taps.channel), [out] "r"(out),
                   [offset] "r"(offset), [lo] "r"(lo), [hi] "r"(hi)
                 : "memory");
  }
}

#undef MCUFLOW_DW_PRODUCTS
#undef MCUFLOW_DW_ADD_PRODUCTS
#undef MCUFLOW_DW_WIDEN
#undef MCUFLOW_DW_TAP
#undef MCUFLOW_DW_TAP_PAIR
#undef MCUFLOW_DW_NEXT_WEIGHTS
#undef MCUFLOW_DW_STREAM_OUTPUTS
#undef MCUFLOW_DW3_W
#undef MCUFLOW_DW3_BIAS
#undef MCUFLOW_DW3_INSIDE_TAPS
#undef MCUFLOW_DW3_TAP_AT
#undef MCUFLOW_DW3_TABLE_TAPS
#undef MCUFLOW_DW3_ROW
#undef MCUFLOW_DW3_REQUANT
#undef MCUFLOW_DW3_REQUANT_RIGHT
#undef MCUFLOW_DW3_REQUANT_ALL
#undef MCUFLOW_DW3_NARROW
#undef MCUFLOW_DW3_CLAMP
#undef MCUFLOW_DW3_STORE
#undef MCUFLOW_DW3_OUTPUTS

// kRightShiftsOnly when every channel of the whole blocks shifts right (minus right shift < 0:
// its shift is negative, so it has no left shift) and the activation range is all of int8.
RequantKind requant_kind(const DwConvParams& p, const uint8_t* prepared, int32_t block_bytes) {
  if (p.act_min != -128 || p.act_max != 127) return RequantKind::kGeneral;
  int32x4_t minus_right = vdupq_n_s32(kInt32Min);
  constexpr int32_t kRow = kMveDwGroup * 4;
  for (int32_t c = 0; c + kMveDwGroup <= p.in_c; c += kMveDwGroup, prepared += block_bytes) {
    const int32_t* row = reinterpret_cast<const int32_t*>(prepared + kMveMinusRightShift * kRow);
    for (int32_t lanes = 0; lanes < kMveDwGroup; lanes += 4) minus_right = vmaxq_s32(minus_right, vldrwq_s32(row + lanes));
  }
  return vmaxvq_s32(kInt32Min, minus_right) < 0 ? RequantKind::kRightShiftsOnly : RequantKind::kGeneral;
}

// Requantizes accumulator kAcc of a block.
template <int32_t kAcc>
int32x4_t requantize_accumulator(int32x4_t acc, const int32_t* table, const DwConvParams& p, int32x4_t act_min,
                                 int32x4_t act_max) {
  constexpr int32_t kRow = kMveDwGroup * 4, kLanes = 16 * kAcc;  // bytes
  return mve::requantize<kMveMultiplier * kRow + kLanes, kMveLeftShift * kRow + kLanes,
                         kMveMinusRightShift * kRow + kLanes>(acc, table, p.output_offset, act_min, act_max);
}

// One output pixel for the 16 channels (`channels` when kPartial) of one block, through
// intrinsics and the tap steps above: windows other than 3x3 and a 3x3 window's last partial
// block.
template <bool kPartial, typename Taps>
void pixel_block(const DwConvParams& p, const Taps& tap_input, const uint8_t* blk, int8_t* out, int32_t channels) {
  const int32_t* table = reinterpret_cast<const int32_t*>(blk);
  const int8_t* weights = reinterpret_cast<const int8_t*>(blk + MveDwLayout{0, 0}.table_bytes());
  const int32_t k_h = p.k_h, k_w = p.k_w;
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
  for (int32_t t = 0; t + 1 < taps; t += 2) {
    const int8_t* x0 = next_tap(0);
    accumulate_tap_pair(acc, x0, next_tap(1), weights);
  }
  if (taps % 2) accumulate_tap(acc, next_tap(0), weights);
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

// The blocks of one output pixel from channel c on (blk: that block's bytes) through pixel_block.
template <typename Taps>
void pixel_blocks(const DwConvParams& p, const Taps& taps, const uint8_t* blk, int32_t block_bytes, int32_t c,
                  int8_t* out) {
  for (; c < p.in_c; c += kMveDwGroup, blk += block_bytes) {
    Taps block_taps = taps;
    if constexpr (std::is_same_v<Taps, InsideTaps>) block_taps.first += c;
    else block_taps.channel = c;
    if (c + kMveDwGroup <= p.in_c) pixel_block<false>(p, block_taps, blk, out + c, kMveDwGroup);
    else pixel_block<true>(p, block_taps, blk, out + c, p.in_c - c);
  }
}

// The pixel walk of one op: every field a value, copied into locals where the assembly's
// memory clobber would otherwise make the compiler reload it for every block.
struct Walk {
  DwConvParams p;
  const int8_t* input;
  const uint8_t* prepared;
  int8_t* output;
  const int8_t* zero_points;  // the prepared zero point row
  int32_t block_bytes, row_step, column_step;
  // Outputs whose whole window lies inside the input: oy in [y_lo, y_hi), ox in [x_lo, x_hi).
  int32_t y_lo, y_hi, x_lo, x_hi;

  Walk(const DwConvParams& params, const int8_t* in, const uint8_t* prep, int8_t* out) : p(params), input(in), prepared(prep), output(out) {
    const MveDwLayout layout{p.in_c, p.k_h * p.k_w};
    zero_points = reinterpret_cast<const int8_t*>(prepared + layout.zero_point_row_at());
    block_bytes = layout.block_bytes();
    row_step = p.dil_h * p.in_w * p.in_c;
    column_step = p.dil_w * p.in_c;
    auto first_inside = [](int32_t pad, int32_t stride) { return (pad + stride - 1) / stride; };
    auto end_inside = [](int32_t in, int32_t pad, int32_t span, int32_t stride, int32_t out) {
      const int32_t end = in + pad >= span ? (in + pad - span) / stride + 1 : 0;
      return end < out ? end : out;
    };
    y_lo = first_inside(p.pad_top, p.stride_h);
    x_lo = first_inside(p.pad_left, p.stride_w);
    y_hi = end_inside(p.in_h, p.pad_top, (p.k_h - 1) * p.dil_h + 1, p.stride_h, p.out_h);
    x_hi = end_inside(p.in_w, p.pad_left, (p.k_w - 1) * p.dil_w + 1, p.stride_w, p.out_w);
  }

  // The blocks of one pixel: the whole ones of a 3x3 window through dw3_block, the others
  // through pixel_blocks.
  template <bool kWindow3x3, RequantKind kKind, typename Taps>
  void blocks(const Taps& taps, int8_t* out) const {
    int32_t c = 0;
    const uint8_t* blk = prepared;
    if constexpr (kWindow3x3) {
      const int32_t whole_end = p.in_c & ~(kMveDwGroup - 1), step = block_bytes;
      const int32_t offset = p.output_offset, lo = p.act_min, hi = p.act_max;
      for (Taps block_taps = taps; c < whole_end; c += kMveDwGroup, blk += step) {
        if constexpr (std::is_same_v<Taps, InsideTaps>) block_taps.first = taps.first + c;
        else block_taps.channel = c;
        dw3_block<kKind>(blk, block_taps, out + c, offset, lo, hi);
      }
      if (c == p.in_c) return;
    }
    pixel_blocks(p, taps, blk, block_bytes, c, out);
  }

  // Not inlined: the walk's forward and backward loops would each get a copy.
  template <bool kWindow3x3, RequantKind kKind>
  __attribute__((noinline)) void pixel(int32_t oy, int32_t ox) const {
    const int32_t in_w = p.in_w, in_c = p.in_c;
    int8_t* out = output + (oy * p.out_w + ox) * in_c;
    const int32_t iy0 = oy * p.stride_h - p.pad_top, ix0 = ox * p.stride_w - p.pad_left;
    if (oy >= y_lo && oy < y_hi && ox >= x_lo && ox < x_hi) {
      blocks<kWindow3x3, kKind>(InsideTaps{input + (iy0 * in_w + ix0) * in_c, row_step, column_step}, out);
      return;
    }
    const int8_t* tap_pixel[kMveDwMaxTaps];  // an input pixel, or the zero point row
    const int32_t k_h = kWindow3x3 ? 3 : p.k_h, k_w = kWindow3x3 ? 3 : p.k_w;  // unrolled for 3x3
    for (int32_t ky = 0, t = 0, iy = iy0; ky < k_h; ++ky, iy += p.dil_h) {
      const bool row_inside = uint32_t(iy) < uint32_t(p.in_h);
      const int8_t* row = input + iy * in_w * in_c;
      for (int32_t kx = 0, ix = ix0; kx < k_w; ++kx, ++t, ix += p.dil_w) {
        tap_pixel[t] = row_inside && uint32_t(ix) < uint32_t(in_w) ? row + ix * in_c : zero_points;
      }
    }
    blocks<kWindow3x3, kKind>(PointedTaps{tap_pixel, k_w, 0}, out);
  }
};

template <bool kWindow3x3, RequantKind kKind>
void dwconv(const DwConvParams& p, const int8_t* input, const uint8_t* prepared, int8_t* output) {
  const Walk walk(p, input, prepared, output);
  detail::for_each_output_pixel(p.out_h, p.out_w, input, output,
                                [&walk](int32_t oy, int32_t ox) { walk.pixel<kWindow3x3, kKind>(oy, ox); });
}

}  // namespace

void dwconv_s8_mve(const DwConvParams& p, const int8_t* input, const uint8_t* prepared, int8_t* output) {
  if (p.k_h == 3 && p.k_w == 3) {
    if (requant_kind(p, prepared, MveDwLayout{p.in_c, 9}.block_bytes()) == RequantKind::kRightShiftsOnly)
      dwconv<true, RequantKind::kRightShiftsOnly>(p, input, prepared, output);
    else
      dwconv<true, RequantKind::kGeneral>(p, input, prepared, output);
  } else {
    dwconv<false, RequantKind::kGeneral>(p, input, prepared, output);
  }
}

}  // namespace mcuflow::kernels
