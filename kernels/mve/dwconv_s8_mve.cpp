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
// A 3x3 window runs a row at a time through one assembly loop (dw3_run) over a run of pixels:
// the nine tap pointers in core registers, each block's taps, requantization, narrowing and
// store, every constant addressed from the block's prepared bytes, a partial last block under
// predication. With 2, 4 or 8 channels at stride 1 along the row, a pass of the run is one whole
// block of 16 / in_c adjacent pixels (the prepared block repeats the channels in every lane): a
// tap's 16 bytes are that tap's input for each of them. docs/kernels_dsp.md counts its
// instructions and says why it is exact.
#include "../reference/raster_order.h"
#include "mcuflow/kernels/arith.h"
#include "mve_blocks.h"

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

// --- the whole blocks of a 3x3 window in one assembly loop -------------------------------
// Byte offsets in a block's prepared bytes (kernels_mve.h): table rows of kMveDwGroup int32
// (bias' at 0, multipliers at 64, left shifts at 128, minus right shifts at 192), then the
// nine taps' weights at 256 + 16 * tap; the next block starts kDw3BlockBytes on. The first
// load moves %[blk] on to the next block, so the offsets below are from there (offset - 400),
// all within VLDRW's immediate range (+-508).
constexpr int32_t kDw3BlockBytes = 400;
static_assert(MveDwLayout{kMveDwGroup, 9}.block_bytes() == kDw3BlockBytes);
#define MCUFLOW_DW3_W(at) "vldrw.32 q5, [%[blk], #" at "]\n\t"
#define MCUFLOW_DW3_BIAS                      \
  "vldrw.32 q0, [%[blk]], #400\n\t"      \
  "vldrw.32 q1, [%[blk], #-384]\n\t"     \
  "vldrw.32 q2, [%[blk], #-368]\n\t"     \
  "vldrw.32 q3, [%[blk], #-352]\n\t"
// Input loads: in a whole block, a tap's last load moves its pointer on to the next block's
// bytes (post-increment): an input pixel's next channels, or the zero point row's next 16
// bytes for a padding tap. In a pixel's partial last block (P0 from VCTP: its channels) the
// loads are predicated, reading nothing past the pixel's channels (inactive lanes load 0), and
// leave the pointers where they are.
#define MCUFLOW_DW3_X_FIRST(at) "vldrb.8 q4, [%[" at "]]\n\t"
#define MCUFLOW_DW3_X_LAST(at) "vldrb.8 q4, [%[" at "]], #16\n\t"
#define MCUFLOW_DW3_X_PARTIAL(at) "vpst\n\tvldrbt.8 q4, [%[" at "]]\n\t"
#define MCUFLOW_DW3_PRODUCTS(x_last, at, w_at) \
  x_last(at) MCUFLOW_DW3_W(w_at)              \
  "vmullb.s8 q6, q4, q5\n\t"                  \
  "vmullt.s8 q7, q4, q5\n\t"
// A second tap's products added in int16 (|x * w| <= 128 * 127 with w != -128, so two fit).
// Its input is loaded twice because VMULLT overwrites it and no q register is left.
#define MCUFLOW_DW3_ADD_PRODUCTS(x_first, x_last, at, w_at) \
  x_first(at) MCUFLOW_DW3_W(w_at)                          \
  "vmullt.s8 q4, q4, q5\n\t"                               \
  "vadd.i16 q7, q7, q4\n\t" x_last(at)                     \
  "vmullb.s8 q4, q4, q5\n\t"                               \
  "vadd.i16 q6, q6, q4\n\t"
// The int16 products widened into the accumulators (q4 as scratch).
#define MCUFLOW_DW3_WIDEN                        \
  "vmovlb.s16 q4, q6\n\t"                     \
  "vadd.i32 q0, q0, q4\n\t"                   \
  "vmovlt.s16 q4, q6\n\t"                     \
  "vadd.i32 q1, q1, q4\n\t"                   \
  "vmovlb.s16 q4, q7\n\t"                     \
  "vadd.i32 q2, q2, q4\n\t"                   \
  "vmovlt.s16 q4, q7\n\t"                     \
  "vadd.i32 q3, q3, q4\n\t"
#define MCUFLOW_DW3_PAIR(xf, xl, at0, at1, w0, w1) \
  MCUFLOW_DW3_PRODUCTS(xl, at0, w0) MCUFLOW_DW3_ADD_PRODUCTS(xf, xl, at1, w1) MCUFLOW_DW3_WIDEN
#define MCUFLOW_DW3_TAPS(xf, xl)                                                                         \
  MCUFLOW_DW3_PAIR(xf, xl, "t0", "t1", "-144", "-128") MCUFLOW_DW3_PAIR(xf, xl, "t2", "t3", "-112", "-96") \
  MCUFLOW_DW3_PAIR(xf, xl, "t4", "t5", "-80", "-64") MCUFLOW_DW3_PAIR(xf, xl, "t6", "t7", "-48", "-32")     \
  MCUFLOW_DW3_PRODUCTS(xl, "t8", "-16") MCUFLOW_DW3_WIDEN
// Requantization of accumulator a: the general steps (mve::requantize's), or the ones for an
// op whose every channel shifts right and none left (RequantKind::kRightShiftsOnly).
#define MCUFLOW_DW3_ROW(row_at) "vldrw.32 q4, [%[blk], #" row_at "]\n\t"
#define MCUFLOW_DW3_REQUANT(a, lshift_at, mult_at, rshift_at)                               \
  MCUFLOW_DW3_ROW(lshift_at) MCUFLOW_MVE_RQ_SHIFT_LEFT(a, "q4")               \
  MCUFLOW_DW3_ROW(mult_at) MCUFLOW_MVE_RQ_MULTIPLY(a, "q4")                   \
  MCUFLOW_DW3_ROW(rshift_at) MCUFLOW_MVE_RQ_SHIFT_RIGHT(a, "q4", "q5")
#define MCUFLOW_DW3_REQUANT_RIGHT(a, lshift_at, mult_at, rshift_at)                         \
  MCUFLOW_DW3_ROW(mult_at) MCUFLOW_MVE_RQ_MULTIPLY(a, "q4")                   \
  MCUFLOW_DW3_ROW(rshift_at) MCUFLOW_MVE_RQ_SHIFT_RIGHT_ALL(a, "q4", "q5")
#define MCUFLOW_DW3_REQUANT_ALL(step)                                                       \
  step("q0", "-272", "-336", "-208") step("q1", "-256", "-320", "-192")                       \
      step("q2", "-240", "-304", "-176") step("q3", "-224", "-288", "-160")
// Saturating narrowing to int16 (channel order: even channels in a0, odd in a2), the output
// offset (the low half of %[pk]) added with saturation, narrowing to int8 (all 16 channels in
// order in a0). Saturation clamps to int8 exactly where the reference's int32 sum would leave
// [-128, 127].
#define MCUFLOW_DW3_NARROW                     \
  "vqmovnb.s32 q0, q0\n\t"            \
  "vqmovnt.s32 q0, q1\n\t"            \
  "vqmovnb.s32 q2, q2\n\t"            \
  "vqmovnt.s32 q2, q3\n\t"            \
  "vqadd.s16 q0, q0, %[pk]\n\t"       \
  "vqadd.s16 q2, q2, %[pk]\n\t"       \
  "vqmovnb.s16 q0, q0\n\t"            \
  "vqmovnt.s16 q0, q2\n\t"
// The activation range (bytes 2 and 3 of %[pk]), when narrower than int8; %[pk] is rotated
// back to its value by the end.
#define MCUFLOW_DW3_CLAMP                      \
  "ror %[pk], %[pk], #16\n\t"                 \
  "vdup.8 q4, %[pk]\n\t"                   \
  "vmax.s8 q0, q0, q4\n\t"         \
  "ror %[pk], %[pk], #8\n\t"                  \
  "vdup.8 q4, %[pk]\n\t"                   \
  "vmin.s8 q0, q0, q4\n\t"         \
  "ror %[pk], %[pk], #8\n\t"
#define MCUFLOW_DW3_BLOCK(xf, xl, requant, clamp) \
  MCUFLOW_DW3_BIAS MCUFLOW_DW3_TAPS(xf, xl) MCUFLOW_DW3_REQUANT_ALL(requant) MCUFLOW_DW3_NARROW clamp
// A pixel: its whole blocks (lr counts them), then a partial block of `partial` channels (if
// any). Then every tap pointer and the output have moved on by the whole blocks' channels; the
// run ends when the output is at out_end, or the next pixel is tap_delta (out_delta) further on
// and starts at the first block.
#define MCUFLOW_DW3_LOOP(requant, clamp)                                                          \
  "0:\n\t"                                                                                       \
  "ldr lr, %[blocks]\n\t"                                                                        \
  "wls lr, lr, 3f\n\t"                                                                           \
  "1:\n\t" MCUFLOW_DW3_BLOCK(MCUFLOW_DW3_X_FIRST, MCUFLOW_DW3_X_LAST, requant, clamp)             \
  "vstrb.8 q0, [%[out]], #16\n\t"                                                                \
  "le lr, 1b\n\t"                                                                                \
  "3:\n\t"                                                                                       \
  "ldr lr, %[partial]\n\t"                                                                       \
  "cmp lr, #0\n\t"                                                                               \
  "beq 4f\n\t"                                                                                   \
  "vctp.8 lr\n\t" MCUFLOW_DW3_BLOCK(MCUFLOW_DW3_X_PARTIAL, MCUFLOW_DW3_X_PARTIAL, requant, clamp) \
  "vpst\n\t"                                                                                     \
  "vstrbt.8 q0, [%[out]]\n\t"                                                                    \
  "4:\n\t"                                                                                       \
  "ldr lr, %[out_end]\n\t"                                                                       \
  "cmp %[out], lr\n\t"                                                                           \
  "beq 2f\n\t"                                                                                   \
  "ldr %[blk], %[first_block]\n\t"                                                               \
  "ldr lr, %[tap_delta]\n\t"                                                                     \
  "cmp lr, #0\n\t"                                                                               \
  "beq 0b\n\t" /* forwards at stride 1, whole blocks: every pointer is where the next pixel starts */ \
  "add %[t0], %[t0], lr\n\t" "add %[t1], %[t1], lr\n\t" "add %[t2], %[t2], lr\n\t"                \
  "add %[t3], %[t3], lr\n\t" "add %[t4], %[t4], lr\n\t" "add %[t5], %[t5], lr\n\t"                \
  "add %[t6], %[t6], lr\n\t" "add %[t7], %[t7], lr\n\t" "add %[t8], %[t8], lr\n\t"                \
  "ldr lr, %[out_delta]\n\t"                                                                     \
  "add %[out], %[out], lr\n\t"                                                                   \
  "b 0b\n\t"                                                                                     \
  "2:\n\t"
// The accumulators in q0-q3 (channels kMveDwFirstChannel[a] + 4 * lane), the input in q4, the
// weights in q5, the even and odd channels' int16 products in q6 and q7; lr counts. 30 operands,
// GCC's limit: the counts and steps are read from memory.
#define MCUFLOW_DW3_OPERANDS                                                                           \
  : [t0] "+r"(t0), [t1] "+r"(t1), [t2] "+r"(t2), [t3] "+r"(t3), [t4] "+r"(t4), [t5] "+r"(t5),          \
    [t6] "+r"(t6), [t7] "+r"(t7), [t8] "+r"(t8), [blk] "+r"(blk), [out] "+r"(out), [pk] "+r"(pk)       \
  : [blocks] "m"(run.blocks), [partial] "m"(run.partial), [tap_delta] "m"(run.tap_delta),              \
    [out_delta] "m"(run.out_delta), [first_block] "m"(run.first_block), [out_end] "m"(out_end)           \
  : "q0", "q1", "q2", "q3", "q4", "q5", "q6", "q7", "lr", "memory", "cc"

// How an op's requantization may be shortened (decided once per op from its table).
enum class RequantKind {
  kGeneral,          // any shifts and activation range
  kRightShiftsOnly,  // every channel shifts right (so none left), activation range [-128, 127]
};

// The steps of a run of output pixels (or passes) along a row, each the same steps on from the
// one before; the same for every run of an op in one direction (Walk keeps them).
struct Run3x3 {
  int32_t blocks, partial;       // whole blocks, channels of a partial last block (0: none)
  int32_t tap_delta, out_delta;  // bytes from where a pixel leaves the pointers to the next pixel's
  const uint8_t* first_block;
};

// The outputs of a run's whole blocks; taps(ky, kx): the first pixel's tap pointers at channel 0
// (input pixels, or the zero point row for padding taps), out: its output, out_end: where the last
// pixel leaves the output pointer; pk: the output offset in its low half, act_min and act_max in
// bytes 2 and 3.
template <RequantKind kKind, typename Taps>
inline void dw3_run(const Run3x3& run, const int8_t* out_end, const Taps& taps, int8_t* out, uint32_t pk) {
  const int8_t *t0 = taps(0, 0), *t1 = taps(0, 1), *t2 = taps(0, 2), *t3 = taps(1, 0), *t4 = taps(1, 1),
               *t5 = taps(1, 2), *t6 = taps(2, 0), *t7 = taps(2, 1), *t8 = taps(2, 2);
  const uint8_t* blk = run.first_block;
  if constexpr (kKind == RequantKind::kRightShiftsOnly) {
    asm volatile(MCUFLOW_DW3_LOOP(MCUFLOW_DW3_REQUANT_RIGHT, "") MCUFLOW_DW3_OPERANDS);
  } else {
    asm volatile(MCUFLOW_DW3_LOOP(MCUFLOW_DW3_REQUANT, MCUFLOW_DW3_CLAMP) MCUFLOW_DW3_OPERANDS);
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
#undef MCUFLOW_DW3_PRODUCTS
#undef MCUFLOW_DW3_ADD_PRODUCTS
#undef MCUFLOW_DW3_PAIR
#undef MCUFLOW_DW3_WIDEN
#undef MCUFLOW_DW3_TAPS
#undef MCUFLOW_DW3_ROW
#undef MCUFLOW_DW3_REQUANT
#undef MCUFLOW_DW3_REQUANT_RIGHT
#undef MCUFLOW_DW3_REQUANT_ALL
#undef MCUFLOW_DW3_NARROW
#undef MCUFLOW_DW3_CLAMP
#undef MCUFLOW_DW3_BLOCK
#undef MCUFLOW_DW3_LOOP
#undef MCUFLOW_DW3_X_FIRST
#undef MCUFLOW_DW3_X_LAST
#undef MCUFLOW_DW3_X_PARTIAL
#undef MCUFLOW_DW3_OPERANDS

// Where the taps of a window read, from channel 0 (at_channel: from channel c). A window inside
// the input: tap (ky, kx) at first + ky * row_step + kx * column_step.
struct InsideTaps {
  const int8_t* first;  // tap (0, 0)
  int32_t row_step, column_step;
  const int8_t* operator()(int32_t ky, int32_t kx) const { return first + ky * row_step + kx * column_step; }
  InsideTaps at_channel(int32_t c) const { return {first + c, row_step, column_step}; }
};
// A window touching the padding: a tap outside the input reads the zero point row.
struct BorderTaps {
  const int8_t *input, *zero_points;
  int32_t iy0, ix0, in_h, in_w, in_c, dil_h, dil_w;
  const int8_t* operator()(int32_t ky, int32_t kx) const {
    const int32_t iy = iy0 + ky * dil_h, ix = ix0 + kx * dil_w;
    const bool inside = uint32_t(iy) < uint32_t(in_h) && uint32_t(ix) < uint32_t(in_w);
    return inside ? input + (iy * in_w + ix) * in_c : zero_points;
  }
  BorderTaps at_channel(int32_t c) const { return {input + c, zero_points + c, iy0, ix0, in_h, in_w, in_c, dil_h, dil_w}; }
};

// kRightShiftsOnly when every channel shifts right (minus right shift < 0: its shift is
// negative, so it has no left shift) and the activation range is all of int8. A partial last
// block's padding lanes (table zeros) do not count: their outputs are never stored.
RequantKind requant_kind(const DwConvParams& p, const uint8_t* prepared, const MveDwLayout& layout) {
  if (p.out.act_min != -128 || p.out.act_max != 127) return RequantKind::kGeneral;
  int32x4_t minus_right = vdupq_n_s32(kInt32Min);
  int32_t partial_minus_right = kInt32Min;
  constexpr int32_t kRow = kMveDwGroup * 4;
  for (int32_t b = 0; b < layout.blocks(); ++b, prepared += layout.block_bytes()) {
    const int32_t* row = reinterpret_cast<const int32_t*>(prepared + kMveMinusRightShift * kRow);
    if ((b + 1) * kMveDwGroup <= p.in_c) {
      for (int32_t lanes = 0; lanes < kMveDwGroup; lanes += 4) minus_right = vmaxq_s32(minus_right, vldrwq_s32(row + lanes));
    } else {
      for (int32_t e = 0; e < kMveDwGroup; ++e)
        if (layout.table_channel(b, e) >= 0 && row[e] > partial_minus_right) partial_minus_right = row[e];
    }
  }
  return vmaxvq_s32(partial_minus_right, minus_right) < 0 ? RequantKind::kRightShiftsOnly : RequantKind::kGeneral;
}

// Requantizes accumulator kAcc of a block.
template <int32_t kAcc>
int32x4_t requantize_accumulator(int32x4_t acc, const int32_t* table, const DwConvParams& p, int32x4_t act_min,
                                 int32x4_t act_max) {
  constexpr int32_t kRow = kMveDwGroup * 4, kLanes = 16 * kAcc;  // bytes
  return mve::requantize<kMveMultiplier * kRow + kLanes, kMveLeftShift * kRow + kLanes,
                         kMveMinusRightShift * kRow + kLanes>(acc, table, p.out.output_offset, act_min, act_max);
}

// One output pixel for the 16 channels (`channels` when kPartial) of one block, through
// intrinsics and the tap steps above: windows other than 3x3.
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
  const int32x4_t act_min = vdupq_n_s32(p.out.act_min), act_max = vdupq_n_s32(p.out.act_max);
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
    if (c + kMveDwGroup <= p.in_c) pixel_block<false>(p, taps.at_channel(c), blk, out + c, kMveDwGroup);
    else pixel_block<true>(p, taps.at_channel(c), blk, out + c, p.in_c - c);
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
  int32_t whole_blocks, whole_channels;
  // Adjacent output pixels a pass of a 3x3 window computes in one block: 16 / in_c when the block
  // repeats the channels (MveDwLayout::repeats_channels) and adjacent outputs read adjacent inputs
  // (stride 1 along the row), so that a tap's 16 bytes are its input for each of them.
  int32_t pixels_per_pass;
  int32_t pass_bytes, pass_whole;  // a pass's outputs and its whole blocks' channels
  // The runs' steps: a pixel alone (whose steps past its last block are never taken), passes
  // forwards and backwards.
  Run3x3 pixel_steps, forward_steps, backward_steps;
  uint32_t offset_and_range;  // dw3_run's pk
  // Outputs whose whole window lies inside the input: oy in [y_lo, y_hi), ox in [x_lo, x_hi).
  int32_t y_lo, y_hi, x_lo, x_hi;
  // A 3x3 window's passes along a row oy in [y_lo, y_hi), and the pixels they cover forwards
  // ([x_lo, forward_end)) and backwards ([backward_start, x_hi)).
  int32_t row_passes, forward_end, backward_start;

  Walk(const DwConvParams& params, const int8_t* in, const uint8_t* prep, int8_t* out) : p(params), input(in), prepared(prep), output(out) {
    const MveDwLayout layout{p.in_c, p.k_h * p.k_w};
    zero_points = reinterpret_cast<const int8_t*>(prepared + layout.zero_point_row_at());
    block_bytes = layout.block_bytes();
    row_step = p.dil_h * p.in_w * p.in_c;
    column_step = p.dil_w * p.in_c;
    whole_blocks = p.in_c / kMveDwGroup;
    whole_channels = whole_blocks * kMveDwGroup;
    pixels_per_pass = layout.repeats_channels() && p.stride_w == 1 ? kMveDwGroup / p.in_c : 1;
    pass_bytes = pixels_per_pass * p.in_c;
    pass_whole = pixels_per_pass > 1 ? kMveDwGroup : whole_channels;
    pixel_steps = {whole_blocks, p.in_c - whole_channels, 0, 0, prepared};
    const auto pass_steps = [&](int32_t step) {
      return Run3x3{pass_whole / kMveDwGroup, pass_bytes - pass_whole, step * p.stride_w * pass_bytes - pass_whole,
                    step * pass_bytes - pass_whole, prepared};
    };
    forward_steps = pass_steps(1);
    backward_steps = pass_steps(-1);
    offset_and_range = uint32_t(p.out.output_offset & 0xFFFF) | uint32_t(p.out.act_min & 0xFF) << 16 |
                       uint32_t(p.out.act_max & 0xFF) << 24;
    auto first_inside = [](int32_t pad, int32_t stride) { return (pad + stride - 1) / stride; };
    auto end_inside = [](int32_t in, int32_t pad, int32_t span, int32_t stride, int32_t out) {
      const int32_t end = in + pad >= span ? (in + pad - span) / stride + 1 : 0;
      return end < out ? end : out;
    };
    y_lo = first_inside(p.pad_top, p.stride_h);
    x_lo = first_inside(p.pad_left, p.stride_w);
    y_hi = end_inside(p.in_h, p.pad_top, (p.k_h - 1) * p.dil_h + 1, p.stride_h, p.out_h);
    x_hi = end_inside(p.in_w, p.pad_left, (p.k_w - 1) * p.dil_w + 1, p.stride_w, p.out_w);
    row_passes = x_lo < x_hi ? (x_hi - x_lo) / pixels_per_pass : 0;
    forward_end = x_lo + row_passes * pixels_per_pass;
    backward_start = x_hi - row_passes * pixels_per_pass;
  }

  // `passes` passes of pixels_per_pass pixels of row oy of a 3x3 window, whose windows lie inside
  // the input, the first from output pixel ox on, each `step` (+1 or -1) passes on from the one
  // before: one dw3_run.
  template <RequantKind kKind>
  __attribute__((noinline)) void inside_run_3x3(int32_t oy, int32_t ox, int32_t passes, int32_t step) const {
    const int32_t in_c = p.in_c;
    const int32_t iy0 = oy * p.stride_h - p.pad_top, ix0 = ox * p.stride_w - p.pad_left;
    const InsideTaps taps{input + (iy0 * p.in_w + ix0) * in_c, row_step, column_step};
    int8_t* out = output + (oy * p.out_w + ox) * in_c;
    // dw3_run leaves the pointers (and the output) at a pass's partial last block.
    const int8_t* out_end = out + (passes - 1) * step * pass_bytes + pass_whole;
    dw3_run<kKind>(step > 0 ? forward_steps : backward_steps, out_end, taps, out, offset_and_range);
  }

  // Output pixel (oy, ox) of a 3x3 window, touching the padding.
  template <RequantKind kKind>
  __attribute__((noinline)) void border_pixel_3x3(int32_t oy, int32_t ox) const {
    const int32_t in_w = p.in_w, in_c = p.in_c;
    const BorderTaps taps{input, zero_points, oy * p.stride_h - p.pad_top, ox * p.stride_w - p.pad_left,
                          p.in_h, in_w, in_c, p.dil_h, p.dil_w};
    int8_t* out = output + (oy * p.out_w + ox) * in_c;
    dw3_run<kKind>(pixel_steps, out + whole_channels, taps, out, offset_and_range);
  }

  // Row oy of a 3x3 window, forwards or backwards: the passes whose windows lie inside the input
  // as one run, the other pixels one by one (border_pixel_3x3 also takes inside ones).
  template <RequantKind kKind>
  void row_3x3(int32_t oy, bool forward) const {
    const int32_t out_w = p.out_w;
    if (oy < y_lo || oy >= y_hi || row_passes == 0) {
      for (int32_t i = 0; i < out_w; ++i) border_pixel_3x3<kKind>(oy, forward ? i : out_w - 1 - i);
      return;
    }
    if (forward) {
      for (int32_t ox = 0; ox < x_lo; ++ox) border_pixel_3x3<kKind>(oy, ox);
      inside_run_3x3<kKind>(oy, x_lo, row_passes, 1);
      for (int32_t ox = forward_end; ox < out_w; ++ox) border_pixel_3x3<kKind>(oy, ox);
    } else {
      for (int32_t ox = out_w - 1; ox >= x_hi; --ox) border_pixel_3x3<kKind>(oy, ox);
      inside_run_3x3<kKind>(oy, x_hi - pixels_per_pass, row_passes, -1);
      for (int32_t ox = backward_start - 1; ox >= 0; --ox) border_pixel_3x3<kKind>(oy, ox);
    }
  }

  // One output pixel of a window other than 3x3. Not inlined: the walk's forward and backward
  // loops would each get a copy.
  __attribute__((noinline)) void pixel(int32_t oy, int32_t ox) const {
    const int32_t in_w = p.in_w, in_c = p.in_c;
    int8_t* out = output + (oy * p.out_w + ox) * in_c;
    const int32_t iy0 = oy * p.stride_h - p.pad_top, ix0 = ox * p.stride_w - p.pad_left;
    if (oy >= y_lo && oy < y_hi && ox >= x_lo && ox < x_hi) {
      pixel_blocks(p, InsideTaps{input + (iy0 * in_w + ix0) * in_c, row_step, column_step}, prepared, block_bytes, 0, out);
    } else {
      pixel_blocks(p, BorderTaps{input, zero_points, iy0, ix0, p.in_h, in_w, in_c, p.dil_h, p.dil_w}, prepared,
                   block_bytes, 0, out);
    }
  }
};

// A 3x3 window, in the same raster order as for_each_output_pixel, a row at a time.
template <RequantKind kKind>
void dwconv_3x3(const Walk& walk, const DwConvParams& p, const int8_t* input, const int8_t* output) {
  const bool forward = detail::walks_forward(input, output);
  for (int32_t i = 0; i < p.out_h; ++i) walk.row_3x3<kKind>(forward ? i : p.out_h - 1 - i, forward);
}

}  // namespace

void dwconv_s8_mve(const DwConvParams& p, const int8_t* input, const uint8_t* prepared, int8_t* output) {
  const Walk walk(p, input, prepared, output);
  if (p.k_h == 3 && p.k_w == 3) {
    if (requant_kind(p, prepared, MveDwLayout{p.in_c, 9}) == RequantKind::kRightShiftsOnly)
      dwconv_3x3<RequantKind::kRightShiftsOnly>(walk, p, input, output);
    else
      dwconv_3x3<RequantKind::kGeneral>(walk, p, input, output);
  } else {
    detail::for_each_output_pixel(p.out_h, p.out_w, input, output, [&walk](int32_t oy, int32_t ox) { walk.pixel(oy, ox); });
  }
}

}  // namespace mcuflow::kernels
