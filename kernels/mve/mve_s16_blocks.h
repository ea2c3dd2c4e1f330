// Building blocks of the int16-activation MVE kernels (A16W8, docs/quantization.md "int16
// activations"), device builds only. They compute exactly what the reference computes
// (kernels/reference/s16_common.h): an int64 sum of int16 x int8 products plus the int64 bias,
// multiply_by_quantized_multiplier_wide, output offset, clamp.
//
// Where int64 is really needed: VMLALDAV (64-bit accumulation) costs one instruction like
// VMLADAV, so the dot products never need int32 for speed; the output stage does. The kernels
// take the int32 path of s16_tiers.h for a whole call where it holds (its weight check costs a
// few instructions per 16 weights), the requantization as VRMULH on four lanes. Otherwise the
// call accumulates in int64 (VMLALDAV) and requantizes each output with the reference's own
// output stage.
#pragma once
#include "mcuflow/kernels/kernels_mve.h"
#include "mcuflow/kernels/s16_tiers.h"

#if defined(__ARM_FEATURE_MVE)
#include <arm_mve.h>

#include "../reference/s16_common.h"
#include "mve_blocks.h"

namespace mcuflow::kernels::mve {

constexpr int32_t kS16Lanes = 8;  // int16 lanes of one vector

// sum |w[i]| for i < n, sixteen weights per VABAV.
inline uint32_t abs_sum_s8(const int8_t* w, int32_t n) {
  uint32_t sum = 0;
  const int8x16_t zero = vdupq_n_s8(0);
  for (; n > 0; n -= 16, w += 16) {
    const mve_pred16_t p = vctp8q(uint32_t(n));
    sum = vabavq_p_s8(sum, vldrbq_z_s8(w, p), zero, p);
  }
  return sum;
}

// The output stage of four int32 accumulators: exact VRMULH, offset, clamp.
inline int32x4_t requantize_exact(int32x4_t acc, int32x4_t factors, const OutputStage& o) {
  const int32x4_t y = vaddq_n_s32(vrmulhq_s32(acc, factors), o.output_offset);
  return vminq_s32(vmaxq_s32(y, vdupq_n_s32(o.act_min)), vdupq_n_s32(o.act_max));
}

// dst[i] = 0 for i < n, eight values per step in a tail-predicated loop (in assembly: GCC 12
// rebuilds the VCTP predicate at every step of an intrinsics loop). DLSTP behind a test: the
// WLSTP form of this loop ran past its count under QEMU 7.2.
inline void fill_zero_s16(int16_t* dst, int32_t n) {
  if (n <= 0) return;
  asm volatile(
      "dlstp.16 lr, %[n]\n"
      "1:\n\t"
      "vstrh.16 %q[zero], [%[dst]], #16\n\t"
      "letp lr, 1b"
      : [dst] "+r"(dst)
      : [n] "r"(n), [zero] "w"(vdupq_n_s16(0))
      : "lr", "memory");
}

// The chunks of eight values of row[i], i < n, to every other chunk from dst on (dst: a pair
// buffer's first chunk for one row, its second for the other).
inline void interleave_row(int16_t* dst, const int16_t* row, int32_t n) {
  asm volatile(
      "dlstp.16 lr, %[n]\n"
      "1:\n\t"
      "vldrh.16 q0, [%[row]], #16\n\t"
      "vstrh.16 q0, [%[dst]], #32\n\t"
      "letp lr, 1b"
      : [dst] "+r"(dst), [row] "+r"(row)
      : [n] "r"(n)
      : "lr", "q0", "memory");
}

// sum a[i] * w[i] for i < n in int64 (VMLALDAV), the slow path's dot product.
inline int64_t dot_wide(const int16_t* a, const int8_t* w, int32_t n) {
  int64_t acc = 0;
  for (; n > 0; n -= kS16Lanes, a += kS16Lanes, w += kS16Lanes) {
    const mve_pred16_t p = vctp16q(uint32_t(n));
    acc = vmlaldavaq_s16(acc, vldrhq_z_s16(a, p), vldrbq_z_s16(w, p));
  }
  return acc;
}

// The fast path's per-channel tables for a group of up to kS16ChannelGroup output channels,
// filled once per call and group (on the stack): each channel's bias (int32: the bound holds)
// and VRMULH factor.
constexpr int32_t kS16ChannelGroup = 64;
// The deepest rows S16Gemm interleaves in pairs on the stack (deeper ones go one by one).
constexpr int32_t kS16PairMaxDepth = kMveS16ConvMaxDepth;
struct S16ChannelTables {
  int32_t bias[kS16ChannelGroup];
  int32_t factors[kS16ChannelGroup];
};

// The operands of quads() and pair_quads(): the frame pointer (r8), the output stage's vectors,
// every other core register and q0-q3 clobbered; "memory": the frame and what the loop reads and writes.
#define MCUFLOW_S16_BLOCK_OPERANDS                                                                                   \
  : [f] "+r"(f)                                                                                                      \
  : [offset] "w"(offset), [lo] "w"(act_min), [hi] "w"(act_max)                                                       \
  : "r0", "r1", "r2", "r3", "r4", "r5", "r6", "r7", "r9", "r10", "r11", "r12", "lr", "q0", "q1", "q2", "q3", "cc",    \
    "memory"

// A weighted layer as a matrix: out[r][oc] = requantize(bias[oc] + sum_k a_r[k] * w[oc][k]),
// k < depth, for rows a_r = row_at(r) (an fc row, a 1x1 conv's input pixel, a conv's gathered
// window; row_at may reuse one buffer: each row is used before the next is asked for).
class S16Gemm {
 public:
  S16Gemm(const int8_t* weights, const int64_t* bias, const int32_t* multipliers, const int32_t* shifts,
          int32_t depth, int32_t out_c, bool per_channel, const OutputStage& out)
      : w_(weights), bias_(bias), multipliers_(multipliers), shifts_(shifts), depth_(depth), out_c_(out_c),
        per_channel_(per_channel), out_(out) {
    fast_ = s16_gemm_fits_int32(weights, bias, shifts, depth, out_c, per_channel, out, abs_sum_s8);
    pairs_ = depth % kS16Lanes == 0 && depth <= kS16PairMaxDepth && out_c % 4 == 0;
  }

  template <typename RowAt>
  void run(int32_t rows, RowAt row_at, int16_t* out) const {
    if (!fast_) {
      for (int32_t r = 0; r < rows; ++r) wide_row(row_at(r), out + r * out_c_);
      return;
    }
    S16ChannelTables t;
    const int32x4_t offset = vdupq_n_s32(out_.output_offset), act_min = vdupq_n_s32(out_.act_min),
                    act_max = vdupq_n_s32(out_.act_max);
    for (int32_t g = 0; g < out_c_; g += kS16ChannelGroup) {
      const int32_t n = out_c_ - g < kS16ChannelGroup ? out_c_ - g : kS16ChannelGroup, whole = n / 4 * 4;
      fill_tables(g, n, t);
      const int8_t* w = w_ + g * depth_;
      int32_t r = 0;
      if (pairs_) {  // rows two at a time, interleaved chunk by chunk (each row asked for once)
        int16_t pair[2 * kS16PairMaxDepth];
        for (; r + 1 < rows; r += 2) {
          interleave_row(pair, row_at(r), depth_);
          interleave_row(pair + kS16Lanes, row_at(r + 1), depth_);
          int16_t* o = out + r * out_c_ + g;
          S16PairFrame frame{pair, w, depth_, n / 4, t.bias, o, o + out_c_};
          pair_quads(frame, offset, act_min, act_max);
        }
      }
      for (; r < rows; ++r) {
        const int16_t* a = row_at(r);
        int16_t* o = out + r * out_c_ + g;
        if (whole > 0) {
          S16QuadFrame frame{a, w, whole / 4, depth_, o, t.bias};
          quads(frame, offset, act_min, act_max);
        }
        if (whole < n) {  // the last 1 ... 3 channels
          int32_t acc[4] = {0, 0, 0, 0};
          for (int32_t k = 0; k < n - whole; ++k) acc[k] = t.bias[whole + k] + dot1(a, w + (whole + k) * depth_);
          vstrhq_p_s32(o + whole, requantize_exact(vldrwq_s32(acc), vldrwq_s32(t.factors + whole), out_),
                       vctp32q(uint32_t(n - whole)));
        }
      }
    }
  }

 private:
  void fill_tables(int32_t g, int32_t n, S16ChannelTables& t) const {
    for (int32_t c = 0; c < n; ++c) {
      const int32_t q = per_channel_ ? g + c : 0;
      t.bias[c] = bias_ ? int32_t(bias_[g + c]) : 0;
      t.factors[c] = s16_rounding_factor(multipliers_[q], shifts_[q]);
    }
  }

  // The slow path: int64 accumulators, the reference's output stage.
  void wide_row(const int16_t* a, int16_t* out) const {
    for (int32_t oc = 0; oc < out_c_; ++oc) {
      const int32_t q = per_channel_ ? oc : 0;
      const int64_t acc = dot_wide(a, w_ + oc * depth_, depth_) + (bias_ ? bias_[oc] : 0);
      out[oc] = detail::output_stage_s16(acc, multipliers_[q], shifts_[q], out_);
    }
  }

  // What quads() reads; the assembly addresses it by these offsets.
  struct S16QuadFrame {
    const int16_t* row;      // 0
    const int8_t* weights;   // 4: the first quad's first weight row
    int32_t quads;           // 8
    int32_t depth;           // 12
    int16_t* out;            // 16
    const int32_t* bias;     // 20: S16ChannelTables::bias of the first block (its factors 256 bytes on)
  };
  static_assert(sizeof(S16ChannelTables::bias) == 256, "the assembly finds a quad's factors 256 bytes past its bias");

  // f.quads blocks of four output channels of one row (fast path): per block, the row against
  // four weight rows in a tail-predicated loop of eight inputs per step (VMLADAV into int32,
  // sums starting at the bias), then the exact VRMULH output stage on the four sums and a
  // store. All in assembly, every core register taken: the sums in even registers (r6, r8,
  // r10, r12: VMLADAV), the weight rows and the output in low ones (r1, r3, r5, r7, r0: the
  // widening load and the narrowing store), the row in r9, the table in r11, the depth in r2,
  // the next block's first weight row in r4; the row's start and the blocks left wait on the stack.
  static void quads(const S16QuadFrame& frame, int32x4_t offset, int32x4_t act_min, int32x4_t act_max) {
    register const S16QuadFrame* f asm("r8") = &frame;
    asm volatile(
        "ldrd r9, r4, [r8]\n\t"      // row, first weight row
        "ldrd r1, r2, [r8, #8]\n\t"  // quads, depth
        "ldrd r0, r11, [r8, #16]\n\t"  // out, bias table
        "push {r1, r9}\n"             // [sp]: quads left, [sp, #4]: the row
        "1:\n\t"
        "mov r1, r4\n\t"
        "add r3, r1, r2\n\t"
        "add r5, r3, r2\n\t"
        "add r7, r5, r2\n\t"
        "add r4, r7, r2\n\t"
        "ldm r11!, {r6, r8, r10, r12}\n\t"  // the sums start at the bias
        "dlstp.16 lr, r2\n"
        "2:\n\t"
        "vldrh.16 q0, [r9], #16\n\t"
        "vldrb.s16 q1, [r1], #8\n\t"
        "vmladava.s16 r6, q0, q1\n\t"
        "vldrb.s16 q2, [r3], #8\n\t"
        "vmladava.s16 r8, q0, q2\n\t"
        "vldrb.s16 q1, [r5], #8\n\t"
        "vmladava.s16 r10, q0, q1\n\t"
        "vldrb.s16 q2, [r7], #8\n\t"
        "vmladava.s16 r12, q0, q2\n\t"
        "letp lr, 2b\n\t"
        "vmov d6, r6, r8\n\t"  // q3: the four sums
        "vmov d7, r10, r12\n\t"
        "vldrw.32 q0, [r11, #240]\n\t"  // the block's factors (r11 has passed its bias)
        "vrmulh.s32 q3, q3, q0\n\t"
        "vadd.i32 q3, q3, %q[offset]\n\t"
        "vmax.s32 q3, q3, %q[lo]\n\t"
        "vmin.s32 q3, q3, %q[hi]\n\t"
        "vstrh.32 q3, [r0], #8\n\t"
        "ldrd r1, r9, [sp]\n\t"
        "subs r1, r1, #1\n\t"
        "str r1, [sp]\n\t"
        "bne 1b\n\t"
        "add sp, sp, #8"
        MCUFLOW_S16_BLOCK_OPERANDS);
  }

  // What pair_quads() reads; the assembly copies it to the stack and addresses it there.
  struct S16PairFrame {
    const int16_t* pair;     // 0: two rows, interleaved by interleave_row
    const int8_t* weights;   // 4: the first block's first weight row
    int32_t depth;           // 8: a multiple of 8
    int32_t quads;           // 12
    const int32_t* bias;     // 16: S16ChannelTables::bias of the first block
    int16_t* out0;           // 20: the first block's outputs of row 0
    int16_t* out1;           // 24: of row 1
  };

  // quads() for two rows at once: each weight load feeds both rows' VMLADAV, 16 instructions
  // per 8 inputs x 2 rows x 4 channels (the single row's loop: 10 per 8 x 1 x 4). The eight sums
  // take every even core register (r0-r6 row 0, r8-r12 and lr row 1), so the loop counts the
  // depth in r11 (no low-overhead loop: lr is a sum) and the block's state waits on the stack.
  static void pair_quads(const S16PairFrame& frame, int32x4_t offset, int32x4_t act_min, int32x4_t act_max) {
    register const S16PairFrame* f asm("r8") = &frame;
    asm volatile(
        "ldm r8, {r0, r1, r2, r3, r4, r5, r6}\n\t"
        "push {r0, r1, r2, r3, r4, r5, r6}\n"  // the frame at sp
        "1:\n\t"
        "ldrd r9, r1, [sp]\n\t"  // the pair, the block's weight rows r1, r3, r5, r7
        "ldr r11, [sp, #8]\n\t"
        "add r3, r1, r11\n\t"
        "add r5, r3, r11\n\t"
        "add r7, r5, r11\n\t"
        "add r0, r7, r11\n\t"
        "str r0, [sp, #4]\n\t"  // the next block's
        "ldr r0, [sp, #16]\n\t"
        "ldm r0, {r0, r2, r4, r6}\n\t"  // both rows' sums start at the bias
        "mov r8, r0\n\t"
        "mov r10, r2\n\t"
        "mov r12, r4\n\t"
        "mov lr, r6\n"
        "2:\n\t"
        "vldrh.16 q0, [r9], #16\n\t"
        "vldrh.16 q1, [r9], #16\n\t"
        "vldrb.s16 q2, [r1], #8\n\t"
        "vmladava.s16 r0, q0, q2\n\t"
        "vmladava.s16 r8, q1, q2\n\t"
        "vldrb.s16 q3, [r3], #8\n\t"
        "vmladava.s16 r2, q0, q3\n\t"
        "vmladava.s16 r10, q1, q3\n\t"
        "vldrb.s16 q2, [r5], #8\n\t"
        "vmladava.s16 r4, q0, q2\n\t"
        "vmladava.s16 r12, q1, q2\n\t"
        "vldrb.s16 q3, [r7], #8\n\t"
        "vmladava.s16 r6, q0, q3\n\t"
        "vmladava.s16 lr, q1, q3\n\t"
        "subs r11, r11, #8\n\t"
        "bgt 2b\n\t"
        "vmov d0, r0, r2\n\t"  // q0: row 0's four sums, q1: row 1's
        "vmov d1, r4, r6\n\t"
        "vmov d2, r8, r10\n\t"
        "vmov d3, r12, lr\n\t"
        "ldr r0, [sp, #16]\n\t"
        "vldrw.32 q2, [r0, #256]\n\t"  // the block's factors
        "adds r0, r0, #16\n\t"
        "str r0, [sp, #16]\n\t"
        "vrmulh.s32 q0, q0, q2\n\t"
        "vrmulh.s32 q1, q1, q2\n\t"
        "vadd.i32 q0, q0, %q[offset]\n\t"
        "vadd.i32 q1, q1, %q[offset]\n\t"
        "vmax.s32 q0, q0, %q[lo]\n\t"
        "vmax.s32 q1, q1, %q[lo]\n\t"
        "vmin.s32 q0, q0, %q[hi]\n\t"
        "vmin.s32 q1, q1, %q[hi]\n\t"
        "ldrd r1, r3, [sp, #20]\n\t"
        "vstrh.32 q0, [r1], #8\n\t"
        "vstrh.32 q1, [r3], #8\n\t"
        "strd r1, r3, [sp, #20]\n\t"
        "ldr r1, [sp, #12]\n\t"
        "subs r1, r1, #1\n\t"
        "str r1, [sp, #12]\n\t"
        "bne 1b\n\t"
        "add sp, sp, #28"
        MCUFLOW_S16_BLOCK_OPERANDS);
  }

  int32_t dot1(const int16_t* a, const int8_t* w) const {
    int32_t s = 0;
    for (int32_t n = depth_; n > 0; n -= kS16Lanes, a += kS16Lanes, w += kS16Lanes) {
      const mve_pred16_t p = vctp16q(uint32_t(n));
      s = vmladavaq_s16(s, vldrhq_z_s16(a, p), vldrbq_z_s16(w, p));
    }
    return s;
  }

  const int8_t* w_;
  const int64_t* bias_;
  const int32_t* multipliers_;
  const int32_t* shifts_;
  int32_t depth_, out_c_;
  bool per_channel_;
  OutputStage out_;
  bool fast_;
  bool pairs_;  // the fast path may take rows two at a time (pair_quads)
};
#undef MCUFLOW_S16_BLOCK_OPERANDS

}  // namespace mcuflow::kernels::mve

#endif  // __ARM_FEATURE_MVE
