// Building blocks of the DSP kernels (SIMD32, inline assembly), device builds only.
// Kernel-private: only kernels/dsp/*.cpp include it; the portable contract (what each kernel
// takes, prepares and refuses) stays in mcuflow/kernels/kernels_dsp.h, which host code reads.
#pragma once
#include "mcuflow/kernels/kernels_dsp.h"
#include "mcuflow/kernels/lut_s16.h"

#if defined(__ARM_FEATURE_DSP)
#include <arm_acle.h>
#include <cstring>

// Building blocks shared by the DSP kernels (inline: each kernel is its own translation unit).
namespace mcuflow::kernels::dsp {

template <typename T>
inline int32_t read_word(const T* p) {  // any alignment: LDR handles it on these cores
  int32_t v;
  std::memcpy(&v, p, sizeof(v));
  return v;
}

// lut_s16_at (lut_s16.h) with the two neighbouring entries as one word (the lower entry in its
// low half) and the blend lo * (128 - f) + hi * f + 64 as one SMLAD.
inline int16_t lut_s16_at(const int16_t* table, uint32_t u) {
  const int32_t f = int32_t(u & (kLutS16Step - 1));
  const int32_t weights = (kLutS16Step - f) | (f << 16);  // (128 - f, f) as an int16 pair
  return int16_t(__smlad(read_word(table + (u >> kLutS16StepBits)), weights, kLutS16Step >> 1) >> kLutS16StepBits);
}

// out[i] = weight i of the packed int4 `packed` (int4_weights.h), i < count: each word of four
// bytes gives eight weights, UXTB16 spreading the bytes to halfwords and shifts the nibbles to
// bytes, each sign-extended by or-ing 0xF0 where its bit 3 is set (no carry between bytes); the
// last 0 ... 7 weights one byte at a time.
inline void unpack_weights_s4(const uint8_t* packed, int32_t count, int8_t* out) {
  const auto nibbles_to_bytes = [](uint32_t halfword_bytes) {
    const uint32_t nibbles = (halfword_bytes | halfword_bytes << 4) & 0x0F0F0F0Fu;
    return nibbles | (nibbles & 0x08080808u) * 0x1Eu;
  };
  int32_t i = 0;
  for (; i + 8 <= count; i += 8, packed += 4) {
    uint32_t word;
    std::memcpy(&word, packed, 4);
    const uint32_t even = __uxtb16(word), odd = __uxtb16(word >> 8);  // bytes 0, 2 and 1, 3
    const uint32_t first = nibbles_to_bytes((even & 0xFFFFu) | odd << 16);
    const uint32_t second = nibbles_to_bytes(even >> 16 | (odd & 0xFFFF0000u));
    std::memcpy(out + i, &first, 4);
    std::memcpy(out + i + 4, &second, 4);
  }
  kernels::unpack_s4(packed, count - i, out + i);
}

// The int4-weight kernels' scratch (kernels_dsp.h): the op's `count` weights unpacked at its
// front; returns the int8 kernel's scratch, after them.
inline int16_t* unpack_into_scratch(const uint8_t* weights, int32_t count, int8_t* scratch) {
  unpack_weights_s4(weights, count, scratch);
  return reinterpret_cast<int16_t*>(scratch + w4_unpacked_bytes(count));
}

// --- element-wise kernels: four int8 per word ---

inline uint32_t byte_splat(int32_t v) { return (uint32_t(v) & 0xFFu) * 0x01010101u; }

// Each byte of x clamped to [lo, hi] (byte_splat bounds): SSUB8 sets the GE flag of each byte
// and SEL picks; one asm, since the flags must reach SEL unchanged.
inline uint32_t clamp_bytes(uint32_t x, uint32_t lo, uint32_t hi) {
  uint32_t scratch;
  __asm__("ssub8 %[t], %[x], %[lo]\n\t"
          "sel %[x], %[x], %[lo]\n\t"
          "ssub8 %[t], %[x], %[hi]\n\t"
          "sel %[x], %[hi], %[x]"
          : [x] "+r"(x), [t] "=&r"(scratch)
          : [lo] "r"(lo), [hi] "r"(hi));
  return x;
}

// Four values saturated to int8 (SSAT) as the bytes of a word, v0 lowest.
inline uint32_t saturate_pack(int32_t v0, int32_t v1, int32_t v2, int32_t v3) {
  return (uint32_t(__ssat(v0, 8)) & 0xFFu) | (uint32_t(__ssat(v1, 8)) & 0xFFu) << 8 |
         (uint32_t(__ssat(v2, 8)) & 0xFFu) << 16 | uint32_t(__ssat(v3, 8)) << 24;
}

inline void write_word(int8_t* p, uint32_t v) { std::memcpy(p, &v, sizeof(v)); }

// Each byte of `input` looked up in a 256-entry table, a word of four at a time: entry b ^ kFlip
// for byte b (kFlip 0: the byte as unsigned; 0x80: as signed plus 128). Each word is read before
// it is written, so it runs in place.
template <uint32_t kFlip>
inline void lookup_bytes(int32_t n, const int8_t* input, const int8_t* table, int8_t* output) {
  const auto* entries = reinterpret_cast<const uint8_t*>(table);
  int32_t i = 0;
  for (; i + 4 <= n; i += 4) {
    const uint32_t x = uint32_t(read_word(input + i)) ^ (kFlip * 0x01010101u);
    write_word(output + i, entries[x & 0xFFu] | uint32_t(entries[(x >> 8) & 0xFFu]) << 8 |
                               uint32_t(entries[(x >> 16) & 0xFFu]) << 16 | uint32_t(entries[x >> 24]) << 24);
  }
  for (; i < n; ++i) output[i] = int8_t(entries[uint8_t(input[i]) ^ kFlip]);
}

// Bytes 1 and 3 sign-extended to 16 bits. GCC 12 does not fold a rotate into SXTB16 itself.
inline int32_t sxtb16_odd(int32_t x) {
  int32_t r;
  __asm__("sxtb16 %0, %1, ror #8" : "=r"(r) : "r"(x));
  return r;
}
inline int32_t sxtab16_odd(int32_t acc, int32_t x) {
  int32_t r;
  __asm__("sxtab16 %0, %1, %2, ror #8" : "=r"(r) : "r"(acc), "r"(x));
  return r;
}

// (lo[15:0], hi[15:0]) and (lo[31:16], hi[31:16]) as int16 pairs: PKHBT, PKHTB (GCC builds them
// from shifts and ORs otherwise).
inline int32_t pack_low_halves(int32_t lo, int32_t hi) {
  int32_t r;
  __asm__("pkhbt %0, %1, %2, lsl #16" : "=r"(r) : "r"(lo), "r"(hi));
  return r;
}
inline int32_t pack_high_halves(int32_t lo, int32_t hi) {
  int32_t r;
  __asm__("pkhtb %0, %1, %2, asr #16" : "=r"(r) : "r"(hi), "r"(lo));
  return r;
}

struct Words4 {
  int32_t a, b, c, d;
};
// One LDM of four words, advancing p; GCC splits such loads into single LDRs otherwise.
// r7 stays out of the list (frame pointer in some builds).
inline Words4 load4_advance(const int32_t*& p) {
  register int32_t a __asm__("r4"), b __asm__("r5"), c __asm__("r6"), d __asm__("r8");
  __asm__("ldmia %0!, {%1, %2, %3, %4}"
          : "+r"(p), "=r"(a), "=r"(b), "=r"(c), "=r"(d)
          : "m"(*reinterpret_cast<const int32_t(*)[4]>(p)));
  return {a, b, c, d};
}

// --- conv blocks: kDspPixels output pixels, expanded into scratch, times every weight row ---

// Writes one pixel slot of a scratch laid out for kSlots pixels (kDspPixels for conv blocks,
// 1 for a single fc row): window position k of the slot is halfword
// (k / 4) * 4 * kSlots + order(k % 4), order = {0, 2, 1, 3}, of `slot_base`. Its values are
// 2 * (x + offset) for int8 inputs x (T int8_t), the inputs themselves for int16 (T int16_t:
// symmetric, no offset).
template <int32_t kSlots, typename T = int8_t>
struct SlotWriter {
  static constexpr int32_t kGroup = 4 * kSlots;  // halfwords per group of four positions
  int16_t* slot_base;                            // scratch + 4 * slot
  int32_t offset_pair;                           // the input offset in both halves

  SlotWriter(int16_t* scratch, int32_t slot, int32_t offset)
      : slot_base(scratch + 4 * slot), offset_pair(int32_t((uint32_t(offset) & 0xFFFFu) * 0x10001u)) {}

  void put(int32_t k, int32_t v) const { slot_base[(k >> 2) * kGroup + ((k & 1) << 1) + ((k >> 1) & 1)] = int16_t(v); }
  int32_t* group(int32_t k) const { return reinterpret_cast<int32_t*>(slot_base + (k >> 2) * kGroup); }

  int32_t value(int32_t x) const { return sizeof(T) == 1 ? 2 * (x + int16_t(offset_pair)) : x; }

  // Window positions k..k+4*words-1 (k a multiple of 4) from the inputs, four per step.
  void words(const T* src, int32_t words, int32_t k) const {
    for (int32_t* dst = group(k); words > 0; --words, src += 4, dst += kGroup / 2) {
      if constexpr (sizeof(T) == 1) {
        const int32_t x = read_word(src);
        const int32_t even = __sxtab16(offset_pair, x), odd = sxtab16_odd(offset_pair, x);
        dst[0] = __sadd16(even, even);
        dst[1] = __sadd16(odd, odd);
      } else {  // (x0, x1), (x2, x3) repaired as (x0, x2), (x1, x3)
        const int32_t lo = read_word(src), hi = read_word(src + 2);
        dst[0] = pack_low_halves(lo, hi);
        dst[1] = pack_high_halves(lo, hi);
      }
    }
  }

  // Window positions k..k+n-1 from n inputs.
  void run(const T* src, int32_t n, int32_t k) const {
    for (; n > 0 && (k & 3); --n, ++k) put(k, value(*src++));
    words(src, n >> 2, k);
    src += n & ~3;
    k += n & ~3;
    for (n &= 3; n > 0; --n, ++k) put(k, value(*src++));
  }

  // Window positions k..k+n-1 are padding: they contribute 0.
  void zeros(int32_t n, int32_t k) const {
    for (; n > 0 && (k & 3); --n, ++k) put(k, 0);
    for (int32_t* dst = group(k); n >= 4; n -= 4, k += 4, dst += kGroup / 2) dst[0] = dst[1] = 0;
    for (; n > 0; --n, ++k) put(k, 0);
  }
};
using BlockWriter = SlotWriter<kDspPixels>;

// The im2col windows of output pixel (oy, ox) into `slot`, one per group (group g's block of
// the scratch at g * kDspPixels * dsp_conv_depth): window position (ky * k_w + kx) * channels + c
// holds input (iy, ix, g * channels + c) (as SlotWriter writes it), or 0 where (iy, ix) is
// padding; channels = in_c / groups.
template <typename T>
inline void expand_window(const ConvParams& params, const T* input, int32_t oy, int32_t ox, int32_t slot,
                          int16_t* scratch) {
  using Writer = SlotWriter<kDspPixels, T>;
  const ConvParams p = params;  // a copy: the scratch stores could alias the fields otherwise
  const int32_t channels = p.in_c / p.groups, group_scratch = kDspPixels * dsp_conv_depth(p);
  const int32_t iy0 = oy * p.stride_h - p.pad_top, ix0 = ox * p.stride_w - p.pad_left;
  const int32_t row = p.k_w * channels, row_bytes = p.in_w * p.in_c;
  // Taps kx0..kx1-1 of a row are inside the input.
  const int32_t kx0 = ix0 < 0 ? clamp_i32((-ix0 + p.dil_w - 1) / p.dil_w, 0, p.k_w) : 0;
  const int32_t kx1 = clamp_i32((p.in_w - ix0 + p.dil_w - 1) / p.dil_w, kx0, p.k_w);
  // Ungrouped without horizontal dilation, a row's inside taps are one contiguous run of input bytes.
  const bool runs = p.dil_w == 1 && p.groups == 1;
  if (runs && kx0 == 0 && kx1 == p.k_w && (row & 3) == 0 && iy0 >= 0 &&
      iy0 + (p.k_h - 1) * p.dil_h < p.in_h) {  // inside the input, whole words: the common case
    const Writer out(scratch, slot, p.input_offset);
    const T* src = input + iy0 * row_bytes + ix0 * p.in_c;
    for (int32_t k = 0; k < p.k_h * row; k += row, src += p.dil_h * row_bytes) out.words(src, row >> 2, k);
    return;
  }
  for (int32_t g = 0; g < p.groups; ++g, input += channels) {
    const Writer out(scratch + g * group_scratch, slot, p.input_offset);
    for (int32_t ky = 0, k = 0, iy = iy0; ky < p.k_h; ++ky, k += row, iy += p.dil_h) {
      if (iy < 0 || iy >= p.in_h) {
        out.zeros(row, k);
        continue;
      }
      out.zeros(kx0 * channels, k);
      const T* row_input = input + iy * row_bytes;
      if (runs) {
        if (kx1 > kx0) out.run(row_input + (ix0 + kx0) * p.in_c, (kx1 - kx0) * p.in_c, k + kx0 * p.in_c);
      } else {
        for (int32_t kx = kx0; kx < kx1; ++kx)
          out.run(row_input + (ix0 + kx * p.dil_w) * p.in_c, channels, k + kx * channels);
      }
      out.zeros((p.k_w - kx1) * channels, k + kx1 * channels);
    }
  }
}

// a0..a3 += the dot products of four weights (int8 in w) with window positions 4g..4g+3 of
// the block's pixels (x points at group g and moves on to the next group).
inline void mac_group(int32_t w, const int32_t*& x, int32_t& a0, int32_t& a1, int32_t& a2, int32_t& a3) {
  const int32_t w_even = __sxtb16(w), w_odd = sxtb16_odd(w);
  const Words4 x01 = load4_advance(x);
  a0 = __smlad(x01.b, w_odd, __smlad(x01.a, w_even, a0));
  a1 = __smlad(x01.d, w_odd, __smlad(x01.c, w_even, a1));
  const Words4 x23 = load4_advance(x);
  a2 = __smlad(x23.b, w_odd, __smlad(x23.a, w_even, a2));
  a3 = __smlad(x23.d, w_odd, __smlad(x23.c, w_even, a3));
}

// The multiply loop of mac_groups and fast_block_channel: a0..a3 += `groups` >= 1 groups, w
// and x advancing by 4 bytes and one group each, 14 instructions per 16 multiply-accumulates.
// The loop body holds two groups and an odd count enters at the second: groups - 1 = 2 * n + c,
// n + 1 passes from label 1 when c (groups even), else one from label 2 then n from label 1.
#define MCUFLOW_DSP_MAC_GROUP                                 \
  "ldr %[w_odd], [%[w]], #4\n\t"                              \
  "sxtb16 %[w_even], %[w_odd]\n\t"                            \
  "sxtb16 %[w_odd], %[w_odd], ror #8\n\t"                     \
  "ldmia %[x]!, {%[x0], %[x1], %[x2], %[x3]}\n\t"             \
  "smlad %[a0], %[x0], %[w_even], %[a0]\n\t"                  \
  "smlad %[a0], %[x1], %[w_odd], %[a0]\n\t"                   \
  "smlad %[a1], %[x2], %[w_even], %[a1]\n\t"                  \
  "smlad %[a1], %[x3], %[w_odd], %[a1]\n\t"                   \
  "ldmia %[x]!, {%[x0], %[x1], %[x2], %[x3]}\n\t"             \
  "smlad %[a2], %[x0], %[w_even], %[a2]\n\t"                  \
  "smlad %[a2], %[x1], %[w_odd], %[a2]\n\t"                   \
  "smlad %[a3], %[x2], %[w_even], %[a3]\n\t"                  \
  "smlad %[a3], %[x3], %[w_odd], %[a3]\n\t"
#define MCUFLOW_DSP_MAC_LOOP                                  \
  "subs %[groups], %[groups], #1\n\t"                         \
  "lsrs %[groups], %[groups], #1\n\t"                         \
  "bcc 2f\n\t"                                                \
  "1:\n\t" MCUFLOW_DSP_MAC_GROUP                               \
  "2:\n\t" MCUFLOW_DSP_MAC_GROUP                               \
  "subs %[groups], %[groups], #1\n\t"                         \
  "bpl 1b\n\t"
#define MCUFLOW_DSP_MAC_OPERANDS                                                                                   \
  [a0] "+r"(a0), [a1] "+r"(a1), [a2] "+r"(a2), [a3] "+r"(a3), [w] "+r"(w), [x] "+r"(x), [groups] "+r"(groups), \
      [x0] "=&r"(x0), [x1] "=&r"(x1), [x2] "=&r"(x2), [x3] "=&r"(x3), [w_odd] "=&r"(w_odd), [w_even] "=&r"(w_even)

// mac_group over `groups` >= 1 groups, advancing w by 4 bytes and x by one group each. Written
// out because GCC spills within this 13-register loop.
inline void mac_groups(int32_t groups, const int8_t*& w, const int32_t*& x, int32_t& a0, int32_t& a1, int32_t& a2,
                       int32_t& a3) {
  register int32_t x0 __asm__("r4"), x1 __asm__("r5"), x2 __asm__("r6"), x3 __asm__("r8");  // LDM list order
  int32_t w_odd, w_even;
  __asm__(MCUFLOW_DSP_MAC_LOOP : MCUFLOW_DSP_MAC_OPERANDS : : "cc", "memory");
}

// The state of fast_block: every register but the one pointing here is taken by the multiply
// loop (field offsets fixed in its assembly).
struct FastBlockFrame {
  const int32_t* bias;         // 0: the next channel's
  const int32_t* multipliers;  // 4
  const int32_t* shifts;       // 8
  int32_t table_step;          // 12: bytes between channels' multipliers and shifts (0 or 4)
  int8_t* out;                 // 16: pixel 0's output of the next channel; pixel i's at out + i * stride
  int32_t stride;              // 20
  int32_t rounding_base;       // 24: 2 * output_offset + 1
  const int8_t* out_end;       // 28: pixel 0's output past the last channel
  const int32_t* scratch;      // 32: the block's expanded windows
  int32_t groups;              // 36: depth / 4
};
static_assert(sizeof(FastBlockFrame) == 40, "the assembly addresses the fields by these offsets");

// One weight row (4 * groups + tail values, groups >= 1, tail < 4) times the block's kDspPixels
// expanded windows at scratch: a0..a3 += the dot products; w advances past the row.
inline void mac_row(int32_t groups, int32_t tail, const int8_t*& w, const int16_t* scratch, int32_t& a0, int32_t& a1,
                    int32_t& a2, int32_t& a3) {
  const int32_t* x = reinterpret_cast<const int32_t*>(scratch);
  mac_groups(groups, w, x, a0, a1, a2, a3);
  if (tail) {  // the row's last `tail` weights, read as the top bytes of its last word
    mac_group(int32_t(uint32_t(read_word(w + tail - 4)) >> (32 - 8 * tail)), x, a0, a1, a2, a3);
    w += tail;
  }
}

// Every output channel of a whole block (kDspPixels pixels, depth = 4 * groups >= 4) on the fast
// path (fast_outputs): the channel's DspChannel from the reference's tables
// (dsp_fast_channel_of), the multiply loop from 2 * bias, then per pixel dsp_requantize_fast,
// SSAT and the byte store. One assembly block: compiled, the tables' pointers and the four
// outputs' addressing live on the stack around the loop and cost a third more per channel.
// w advances past the block's weight rows.
inline void fast_block(FastBlockFrame* f, const int8_t*& w) {
  register int32_t x0 __asm__("r4"), x1 __asm__("r5"), x2 __asm__("r6"), x3 __asm__("r8");  // LDM list order
  int32_t w_odd, w_even, a0, a1, a2, a3, groups;
  const int32_t* x;
  // After the loop: w_odd multiplier, x1 rounding, x2 right shift, x0 pixel 0's output, w_even
  // the stride, x pixel 2's output; x3 the value on its way out.
#define MCUFLOW_DSP_FAST_OUTPUT(a, store)              \
  "smmlar %[x3], %[" a "], %[w_odd], %[x1]\n\t"        \
  "add %[x3], %[x3], %[" a "], asr #31\n\t"            \
  "asr %[x3], %[x3], %[x2]\n\t"                        \
  "ssat %[x3], #8, %[x3]\n\t"                          \
  "strb %[x3], " store "\n\t"
  __asm__ volatile(  // volatile: its results are the bytes stored
      "0:\n\t"
      "ldr %[x0], [%[f]]\n\t"
      "ldr %[a0], [%[x0]], #4\n\t"
      "str %[x0], [%[f]]\n\t"
      "lsl %[a0], %[a0], #1\n\t"
      "mov %[a1], %[a0]\n\t"
      "mov %[a2], %[a0]\n\t"
      "mov %[a3], %[a0]\n\t"
      "ldrd %[x], %[groups], [%[f], #32]\n\t"
      MCUFLOW_DSP_MAC_LOOP
      "ldrd %[x0], %[x1], [%[f], #4]\n\t"
      "ldr %[x3], [%[f], #12]\n\t"
      "ldr %[w_odd], [%[x0]]\n\t"
      "add %[x0], %[x0], %[x3]\n\t"
      "ldr %[x2], [%[x1]]\n\t"
      "add %[x1], %[x1], %[x3]\n\t"
      "strd %[x0], %[x1], [%[f], #4]\n\t"
      "ldr %[x0], [%[f], #24]\n\t"
      "mvn %[x1], %[x2]\n\t"  // e - 1 = -shift - 1
      "lsl %[x1], %[x0], %[x1]\n\t"
      "rsb %[x2], %[x2], #0\n\t"
      "ldrd %[x0], %[w_even], [%[f], #16]\n\t"
      "add %[x], %[x0], %[w_even], lsl #1\n\t"
      MCUFLOW_DSP_FAST_OUTPUT("a0", "[%[x0]]")
      MCUFLOW_DSP_FAST_OUTPUT("a1", "[%[x0], %[w_even]]")
      MCUFLOW_DSP_FAST_OUTPUT("a2", "[%[x]]")
      MCUFLOW_DSP_FAST_OUTPUT("a3", "[%[x], %[w_even]]")
      "add %[x0], %[x0], #1\n\t"
      "str %[x0], [%[f], #16]\n\t"
      "ldr %[x3], [%[f], #28]\n\t"
      "cmp %[x0], %[x3]\n\t"
      "bne 0b"
      : [a0] "=&r"(a0), [a1] "=&r"(a1), [a2] "=&r"(a2), [a3] "=&r"(a3), [w] "+r"(w), [x] "=&r"(x),
        [groups] "=&r"(groups), [x0] "=&r"(x0), [x1] "=&r"(x1), [x2] "=&r"(x2), [x3] "=&r"(x3), [w_odd] "=&r"(w_odd),
        [w_even] "=&r"(w_even)
      : [f] "r"(f)
      : "cc", "memory");
#undef MCUFLOW_DSP_FAST_OUTPUT
}
#undef MCUFLOW_DSP_MAC_GROUP
#undef MCUFLOW_DSP_MAC_LOOP
#undef MCUFLOW_DSP_MAC_OPERANDS

// Depthwise: a0..a3 (channels c..c+3) += the taps' input words, read at tap_input[t] + c
// (offset added by SXTAB16), times the widened weights w[2t], w[2t+1] (kernels_dsp.h), for
// `taps` >= 1 taps: 10.5 instructions per tap and four multiply-accumulates. Written out
// because GCC spills here; the loop body holds two taps, an odd count enters at the second
// (as in mac_groups) and the loop end stays in memory since every register is taken.
inline void dw_taps(int32_t taps, const int8_t* const* tap_input, int32_t c, const int32_t* w, int32_t offset_pair,
                    int32_t& a0, int32_t& a1, int32_t& a2, int32_t& a3) {
  const int32_t* const w_end = w + 2 * taps;
  const int32_t odd_taps = taps & 1;
  int32_t even, odd, w_even, w_odd;  // `even` also holds the tap's input pointer and loop values
#define MCUFLOW_DSP_DW_TAP                                         \
  "ldr %[even], [%[tap_input]], #4\n\t"                            \
  "ldr %[odd], [%[even], %[c]]\n\t"                                \
  "ldrd %[w_even], %[w_odd], [%[w]], #8\n\t"                       \
  "sxtab16 %[even], %[offset_pair], %[odd]\n\t"                    \
  "sxtab16 %[odd], %[offset_pair], %[odd], ror #8\n\t"             \
  "smlabb %[a0], %[even], %[w_even], %[a0]\n\t"                    \
  "smlatt %[a2], %[even], %[w_even], %[a2]\n\t"                    \
  "smlabb %[a1], %[odd], %[w_odd], %[a1]\n\t"                      \
  "smlatt %[a3], %[odd], %[w_odd], %[a3]\n\t"
  __asm__(
      "ldr %[even], %[odd_taps]\n\t"
      "cmp %[even], #0\n\t"
      "bne 2f\n\t"
      "1:\n\t" MCUFLOW_DSP_DW_TAP
      "2:\n\t" MCUFLOW_DSP_DW_TAP
      "ldr %[even], %[w_end]\n\t"
      "cmp %[w], %[even]\n\t"
      "bne 1b"
      : [a0] "+r"(a0), [a1] "+r"(a1), [a2] "+r"(a2), [a3] "+r"(a3), [tap_input] "+r"(tap_input), [w] "+r"(w),
        [even] "=&r"(even), [odd] "=&r"(odd), [w_even] "=&r"(w_even), [w_odd] "=&r"(w_odd)
      : [c] "r"(c), [offset_pair] "r"(offset_pair), [odd_taps] "m"(odd_taps), [w_end] "m"(w_end)
      : "cc", "memory");
#undef MCUFLOW_DSP_DW_TAP
}

// Depthwise 3x3 (kernels_dsp.h, dwconv_s8_3x3_dsp), one output row for `channels` channels:
// channel k's kernel rows start at r0, r1, r2 + k * channel_step (int16 rows, column 0); its
// weight pairs are w[6k..6k+5]. For `pairs` >= 1 pairs of output pixels, then one more pixel
// when `odd`, the three rows' sums go to acc (two int32 per pair and for the odd pixel,
// channel after channel). Per kernel row a pair x, x+1 takes two words, A = (x, x+1) and
// C = (x+2, x+3): pixel x is SMLAD(A, (w0, w1)) + C.bottom * w2, pixel x+1 is
// A.top * w0 + SMLAD(C, (w1, w2)): 22 instructions per pair and 18 multiply-accumulates, 13
// for the odd pixel and its nine, 14 more per channel. Written out because GCC spills the
// weights here; loop ends stay in memory since every register is taken.
inline void dw3_output_row(int32_t channels, int32_t pairs, bool odd, const int16_t* r0, const int16_t* r1,
                           const int16_t* r2, int32_t channel_step, const int32_t* w, int32_t* acc) {
  // Between channels the row pointers, which moved 4 bytes per pair, go on to the next channel.
  const int32_t row_advance = 2 * channel_step - 4 * pairs, pair_bytes = 8 * pairs, odd_pixel = odd;
  const int32_t* const w_end = w + kDspDw3WeightWords * channels;
  int32_t* acc_end;
  // (wy0, wy1) and (wy1, wy2) of kernel row y, in the order LDMIA fills them.
  register int32_t p0 __asm__("r4"), q0 __asm__("r5"), p1 __asm__("r6"), q1 __asm__("r8"), p2 __asm__("r9"),
      q2 __asm__("r10");
  int32_t a0, a1, t;
#define MCUFLOW_DSP_DW3_ROW(row, p, q)                       \
  "ldr %[t], [%[" row "]]\n\t"                               \
  "smlad %[a0], %[t], %[" p "], %[a0]\n\t"                   \
  "smlatb %[a1], %[t], %[" p "], %[a1]\n\t"                  \
  "ldr %[t], [%[" row "], #4]!\n\t" /* on to the next pair */ \
  "smlabt %[a0], %[t], %[" q "], %[a0]\n\t"                  \
  "smlad %[a1], %[t], %[" q "], %[a1]\n\t"
#define MCUFLOW_DSP_DW3_ODD_ROW(row, p, q)                   \
  "ldr %[t], [%[" row "]]\n\t"                               \
  "smlad %[a0], %[t], %[" p "], %[a0]\n\t"                   \
  "ldr %[t], [%[" row "], #4]\n\t"                           \
  "smlabt %[a0], %[t], %[" q "], %[a0]\n\t"
  __asm__ volatile(  // volatile: its result is in memory, not in the outputs
      "0:\n\t"
      "ldmia %[w]!, {%[p0], %[q0], %[p1], %[q1], %[p2], %[q2]}\n\t"
      "ldr %[t], %[pair_bytes]\n\t"
      "add %[t], %[t], %[acc]\n\t"
      "str %[t], %[acc_end]\n\t"
      "1:\n\t"
      "ldr %[t], [%[r0]]\n\t"  // kernel row 0 starts the sums
      "smuad %[a0], %[t], %[p0]\n\t"
      "smultb %[a1], %[t], %[p0]\n\t"
      "ldr %[t], [%[r0], #4]!\n\t"
      "smlabt %[a0], %[t], %[q0], %[a0]\n\t"
      "smlad %[a1], %[t], %[q0], %[a1]\n\t"
      MCUFLOW_DSP_DW3_ROW("r1", "p1", "q1") MCUFLOW_DSP_DW3_ROW("r2", "p2", "q2")
      "strd %[a0], %[a1], [%[acc]], #8\n\t"
      "ldr %[t], %[acc_end]\n\t"
      "cmp %[acc], %[t]\n\t"
      "bne 1b\n\t"
      "ldr %[t], %[odd_pixel]\n\t"
      "cmp %[t], #0\n\t"
      "beq 2f\n\t"
      "ldr %[t], [%[r0]]\n\t"  // the odd pixel
      "smuad %[a0], %[t], %[p0]\n\t"
      "ldr %[t], [%[r0], #4]\n\t"
      "smlabt %[a0], %[t], %[q0], %[a0]\n\t"
      MCUFLOW_DSP_DW3_ODD_ROW("r1", "p1", "q1") MCUFLOW_DSP_DW3_ODD_ROW("r2", "p2", "q2")
      "str %[a0], [%[acc]], #8\n\t"
      "2:\n\t"
      "ldr %[t], %[row_advance]\n\t"
      "add %[r0], %[r0], %[t]\n\t"
      "add %[r1], %[r1], %[t]\n\t"
      "add %[r2], %[r2], %[t]\n\t"
      "ldr %[t], %[w_end]\n\t"
      "cmp %[w], %[t]\n\t"
      "bne 0b"
      : [r0] "+r"(r0), [r1] "+r"(r1), [r2] "+r"(r2), [acc] "+r"(acc), [w] "+r"(w), [a0] "=&r"(a0), [a1] "=&r"(a1),
        [t] "=&r"(t), [p0] "=&r"(p0), [q0] "=&r"(q0), [p1] "=&r"(p1), [q1] "=&r"(q1), [p2] "=&r"(p2), [q2] "=&r"(q2),
        [acc_end] "=m"(acc_end)
      : [pair_bytes] "m"(pair_bytes), [row_advance] "m"(row_advance), [w_end] "m"(w_end), [odd_pixel] "m"(odd_pixel)
      : "cc", "memory");
#undef MCUFLOW_DSP_DW3_ROW
#undef MCUFLOW_DSP_DW3_ODD_ROW
}

// The output tensor's offset and activation clamp, and the window size (for dsp_fast_channel).
struct Output {
  int32_t offset, act_min, act_max;
  int64_t depth;
};

// True when every channel takes the fast requantization and the clamp is int8's own range:
// kernels then run their kFast variant, which needs no per-output tests.
inline bool fast_outputs(const Output& o, const DspTables& t, int32_t count) {
  if (o.act_min != -128 || o.act_max != 127) return false;
  for (int32_t c = 0; c < count; ++c) {
    if (!dsp_fast_channel(t.bias[c], t.shifts[c * t.step], o.depth)) return false;
  }
  return true;
}

// Channel c's requantization, from the reference's tables.
template <bool kFast>
inline DspChannel channel(const DspTables& t, int32_t c, const Output& o) {
  const int32_t q = c * t.step;
  if (kFast) return dsp_fast_channel_of(t.bias[c], t.multipliers[q], t.shifts[q], 2 * o.offset + 1);
  return dsp_channel(t.bias[c], t.multipliers[q], t.shifts[q], o.offset, o.depth);
}

// Channel c's accumulator start (DspChannel::acc_init) alone: kernels load it before their
// multiply loops and the rest of the channel after them, as those loops take every register.
template <bool kFast>
inline int32_t acc_start(const DspTables& t, int32_t c, const Output& o) {
  return kFast ? 2 * t.bias[c] : channel<kFast>(t, c, o).acc_init;
}

// The output value (in int8 range) of a doubled accumulator started at ch.acc_init.
template <bool kFast>
inline int32_t output_value(int32_t acc2, const DspChannel& ch, const Output& o) {
  if (kFast) return __ssat(dsp_requantize_fast(acc2, ch), 8);
  return clamp_i32(dsp_requantize(acc2, ch, o.offset), o.act_min, o.act_max);
}

// The same for channel c of the tables.
template <bool kFast>
inline int32_t channel_value(int32_t acc2, const DspTables& t, int32_t c, const Output& o) {
  return output_value<kFast>(acc2, channel<kFast>(t, c, o), o);
}

// Four output values (int8 range) as the bytes of a word, v0 lowest.
inline uint32_t pack4(int32_t v0, int32_t v1, int32_t v2, int32_t v3) {
  const uint32_t even = __uxtb16((uint32_t(v0) & 0xFFFFu) | (uint32_t(v2) << 16));  // PKHBT, UXTB16
  const uint32_t odd = __uxtb16((uint32_t(v1) & 0xFFFFu) | (uint32_t(v3) << 16));
  return even | (odd << 8);
}

// Requantizes and stores one channel's kDspPixels accumulators (count of them valid) at
// dst[i * stride].
template <bool kFast>
inline void store_channel(const DspChannel& ch, const Output& o, const int32_t (&acc)[kDspPixels], int32_t count,
                          int8_t* dst, int32_t stride) {
  auto value = [&](int32_t acc2) { return int8_t(output_value<kFast>(acc2, ch, o)); };
  if (count == kDspPixels) {  // the common case, without per-pixel tests
    dst[0] = value(acc[0]);
    dst += stride;
    dst[0] = value(acc[1]);
    dst += stride;
    dst[0] = value(acc[2]);
    dst[stride] = value(acc[3]);
  } else {
    for (int32_t i = 0; i < count; ++i) dst[i * stride] = value(acc[i]);
  }
}

// For every output channel: its weight row (depth int8 values, depth >= 4) times the block's
// kDspPixels expanded windows, requantized; `count` pixels are stored, pixel i at
// out + i * out_stride.
template <bool kFast>
inline void conv_block(int32_t depth, int32_t out_c, int32_t out_stride, const Output& o, const DspTables& t,
                       const int16_t* scratch, const int8_t* weights, int32_t count, int8_t* out) {
  const int32_t groups = depth >> 2, tail = depth & 3;
  if (kFast && tail == 0 && count == kDspPixels) {  // the common case, all in fast_block
    FastBlockFrame f{t.bias, t.multipliers, t.shifts, 4 * t.step, out, out_stride, 2 * o.offset + 1,
                           out + out_c, reinterpret_cast<const int32_t*>(scratch), groups};
    fast_block(&f, weights);
    return;
  }
  for (int32_t oc = 0; oc < out_c; ++oc, ++out) {
    int32_t stride = out_stride;
    __asm__("" : "+r"(stride));  // opaque: GCC would keep a pointer per output pixel on the stack
    int32_t a0 = acc_start<kFast>(t, oc, o), a1 = a0, a2 = a0, a3 = a0;
    mac_row(groups, tail, weights, scratch, a0, a1, a2, a3);
    const int32_t acc[kDspPixels] = {a0, a1, a2, a3};
    store_channel<kFast>(channel<kFast>(t, oc, o), o, acc, count, out, stride);
  }
}

// a, b += one expanded row (a SlotWriter<1> scratch, x at its first group) times the weight
// rows at wa and wb, over `groups` >= 1 groups of four, advancing x, wa and wb: 25
// instructions per two groups and 16 multiply-accumulates. Written out for the same reasons
// as mac_groups, with the same odd-count entry.
inline void row_pair_groups(int32_t groups, const int32_t*& x, const int8_t*& wa, const int8_t*& wb, int32_t& a,
                            int32_t& b) {
  int32_t x_even, x_odd, w, w_even;
#define MCUFLOW_DSP_ROW_PAIR_GROUP                                 \
  "ldrd %[x_even], %[x_odd], [%[x]], #8\n\t"                       \
  "ldr %[w], [%[wa]], #4\n\t"                                      \
  "sxtb16 %[w_even], %[w]\n\t"                                     \
  "sxtb16 %[w], %[w], ror #8\n\t"                                  \
  "smlad %[a], %[x_even], %[w_even], %[a]\n\t"                     \
  "smlad %[a], %[x_odd], %[w], %[a]\n\t"                           \
  "ldr %[w], [%[wb]], #4\n\t"                                      \
  "sxtb16 %[w_even], %[w]\n\t"                                     \
  "sxtb16 %[w], %[w], ror #8\n\t"                                  \
  "smlad %[b], %[x_even], %[w_even], %[b]\n\t"                     \
  "smlad %[b], %[x_odd], %[w], %[b]\n\t"
  __asm__(
      "subs %[groups], %[groups], #1\n\t"
      "lsrs %[groups], %[groups], #1\n\t"
      "bcc 2f\n\t"
      "1:\n\t" MCUFLOW_DSP_ROW_PAIR_GROUP
      "2:\n\t" MCUFLOW_DSP_ROW_PAIR_GROUP
      "subs %[groups], %[groups], #1\n\t"
      "bpl 1b"
      : [a] "+r"(a), [b] "+r"(b), [groups] "+r"(groups), [x] "+r"(x), [wa] "+r"(wa), [wb] "+r"(wb),
        [x_even] "=&r"(x_even), [x_odd] "=&r"(x_odd), [w] "=&r"(w), [w_even] "=&r"(w_even)
      :
      : "cc", "memory");
#undef MCUFLOW_DSP_ROW_PAIR_GROUP
}

// One row (a SlotWriter<1> scratch, depth >= 4 values) times every weight row, requantized into
// out[0..out_c): two output channels per pass share each expanded input word (an odd last
// channel pairs with itself).
template <bool kFast>
inline void single_row(int32_t depth, int32_t out_c, const Output& o, const DspTables& t, const int16_t* scratch,
                       const int8_t* weights, int8_t* out) {
  const int32_t groups = depth >> 2, tail = depth & 3;
  for (int32_t oc = 0; oc < out_c; oc += 2) {
    const int32_t ob = oc + 1 < out_c ? oc + 1 : oc;
    const int8_t* wa = weights + oc * depth;
    const int8_t* wb = weights + ob * depth;
    int32_t a = acc_start<kFast>(t, oc, o), b = acc_start<kFast>(t, ob, o);
    const int32_t* x = reinterpret_cast<const int32_t*>(scratch);
    row_pair_groups(groups, x, wa, wb, a, b);
    if (tail) {  // the rows' last `tail` weights, read as the top bytes of their last words
      const int32_t shift = 32 - 8 * tail;
      const int32_t last_a = int32_t(uint32_t(read_word(wa + tail - 4)) >> shift);
      const int32_t last_b = int32_t(uint32_t(read_word(wb + tail - 4)) >> shift);
      a = __smlad(x[1], sxtb16_odd(last_a), __smlad(x[0], __sxtb16(last_a), a));
      b = __smlad(x[1], sxtb16_odd(last_b), __smlad(x[0], __sxtb16(last_b), b));
    }
    out[oc] = int8_t(output_value<kFast>(a, channel<kFast>(t, oc, o), o));
    out[ob] = int8_t(output_value<kFast>(b, channel<kFast>(t, ob, o), o));
  }
}

// The conv kernels' pixel loop: blocks of kDspPixels output pixels in output order, each slot
// filled by expand(oy, ox, slot) (every group's window), then conv_block per group: its
// out_c / groups channels, weight rows and tables, its block of the scratch.
template <bool kFast, typename Expand>
inline void conv_pixel_blocks(const ConvParams& p, const Output& o, const DspTables& t, const int8_t* weights,
                              const int16_t* scratch, int8_t* output, Expand expand) {
  const int32_t pixels = p.out_h * p.out_w, depth = int32_t(o.depth), group_out = p.out_c / p.groups;
  const int32_t group_scratch = kDspPixels * ((depth + 3) & ~3);
  int32_t oy = 0, ox = 0;  // the next output pixel
  for (int32_t first = 0; first < pixels; first += kDspPixels) {
    const int32_t count = pixels - first < kDspPixels ? pixels - first : kDspPixels;
    for (int32_t slot = 0; slot < count; ++slot) {
      expand(oy, ox, slot);
      if (++ox == p.out_w) ox = 0, ++oy;
    }
    for (int32_t g = 0, oc = 0; g < p.groups; ++g, oc += group_out) {
      const DspTables group{t.bias + oc, t.multipliers + oc * t.step, t.shifts + oc * t.step, t.step};
      conv_block<kFast>(depth, group_out, p.out_c, o, group, scratch + g * group_scratch, weights + oc * depth, count,
                        output + first * p.out_c + oc);
    }
  }
}

template <typename Expand>
inline void conv_pixels(const ConvParams& p, int32_t depth, const int8_t* weights, const DspTables& t,
                        const int16_t* scratch, int8_t* output, Expand expand) {
  const Output o{p.out.output_offset, p.out.act_min, p.out.act_max, depth};
  if (fast_outputs(o, t, p.out_c)) {
    conv_pixel_blocks<true>(p, o, t, weights, scratch, output, expand);
  } else {
    conv_pixel_blocks<false>(p, o, t, weights, scratch, output, expand);
  }
}

// Fully connected rows (fc_s8_dsp): row r's out_c outputs at output + r * out_stride, from
// weights [out_c][in_c] and tables t of those channels; rows expanded to int16 once, four per pass
// where there are four (as conv pixels), else one.
template <bool kFast>
void fc_rows_pass(const FcParams& p, int32_t out_c, int32_t out_stride, const Output& o, const DspTables& t,
                  const int8_t* input, const int8_t* weights, int16_t* scratch, int8_t* output) {
  int32_t r = 0;
  for (; r + kDspPixels <= p.rows; r += kDspPixels) {
    for (int32_t slot = 0; slot < kDspPixels; ++slot) {
      BlockWriter(scratch, slot, p.input_offset).run(input + (r + slot) * p.in_c, p.in_c, 0);
    }
    conv_block<kFast>(p.in_c, out_c, out_stride, o, t, scratch, weights, kDspPixels, output + r * out_stride);
  }
  for (; r < p.rows; ++r) {
    SlotWriter<1>(scratch, 0, p.input_offset).run(input + r * p.in_c, p.in_c, 0);
    single_row<kFast>(p.in_c, out_c, o, t, scratch, weights, output + r * out_stride);
  }
}

inline void fc_rows(const FcParams& p, int32_t out_c, int32_t out_stride, const DspTables& t, const int8_t* input,
                    const int8_t* weights, int16_t* scratch, int8_t* output) {
  const Output o{p.out.output_offset, p.out.act_min, p.out.act_max, p.in_c};
  if (fast_outputs(o, t, out_c)) fc_rows_pass<true>(p, out_c, out_stride, o, t, input, weights, scratch, output);
  else fc_rows_pass<false>(p, out_c, out_stride, o, t, input, weights, scratch, output);
}

// n bytes from `from` to `to`, two words per step (LDR and STR take any alignment here), then
// the last bytes. Each step reads before it writes: onto itself it stays correct.
inline void copy_bytes(int32_t n, const int8_t* from, int8_t* to) {
  int32_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const int32_t a = read_word(from + i), b = read_word(from + i + 4);
    write_word(to + i, uint32_t(a));
    write_word(to + i + 4, uint32_t(b));
  }
  if (i + 4 <= n) write_word(to + i, uint32_t(read_word(from + i))), i += 4;
  for (; i < n; ++i) to[i] = from[i];
}

// n bytes of `value` from `to`, a word of four at a time.
inline void fill_bytes(int32_t n, int8_t value, int8_t* to) {
  const uint32_t word = uint8_t(value) * 0x01010101u;
  int32_t i = 0;
  for (; i + 4 <= n; i += 4) write_word(to + i, word);
  for (; i < n; ++i) to[i] = value;
}

}  // namespace mcuflow::kernels::dsp
#endif  // __ARM_FEATURE_DSP
