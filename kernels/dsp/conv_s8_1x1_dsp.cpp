// Pointwise (1x1) convolution, int8, DSP extension: passes of kDspPwPixels output pixels, each
// input pixel expanded once to int16 (kernels_dsp.h), times pairs of output channels whose
// weights the compiler widened and interleaved (dsp_pw_walk_prepared): per group of four input
// channels one LDM of the two pixels' words and one of the two channels' words feed 8 SMLADs.
#include "dsp_blocks.h"

namespace mcuflow::kernels {
namespace {

// Pixels a and b (in_c values each, any alignment) into the scratch as kernels_dsp.h lays them
// out: per whole group one word of each, 4 SXTAB16 and one STM (9 instructions per group);
// the last in_c % 4 values one at a time.
void expand_pair(const int8_t* a, const int8_t* b, int32_t in_c, int32_t offset, int16_t* scratch) {
  register int32_t e0 __asm__("r4"), o0 __asm__("r5"), e1 __asm__("r6"), o1 __asm__("r8");  // STM list order
  const int32_t offset_pair = int32_t((uint32_t(offset) & 0xFFFFu) * 0x10001u);
  int32_t* dst = reinterpret_cast<int32_t*>(scratch);
  int32_t groups = in_c >> 2, xa, xb;
  if (groups > 0) {
    __asm__(
        "1:\n\t"
        "ldr %[xa], [%[a]], #4\n\t"
        "ldr %[xb], [%[b]], #4\n\t"
        "sxtab16 %[e0], %[off], %[xa]\n\t"
        "sxtab16 %[o0], %[off], %[xa], ror #8\n\t"
        "sxtab16 %[e1], %[off], %[xb]\n\t"
        "sxtab16 %[o1], %[off], %[xb], ror #8\n\t"
        "stmia %[dst]!, {%[e0], %[o0], %[e1], %[o1]}\n\t"
        "subs %[groups], %[groups], #1\n\t"
        "bne 1b"
        : [a] "+r"(a), [b] "+r"(b), [dst] "+r"(dst), [groups] "+r"(groups), [xa] "=&r"(xa), [xb] "=&r"(xb),
          [e0] "=&r"(e0), [o0] "=&r"(o0), [e1] "=&r"(e1), [o1] "=&r"(o1)
        : [off] "r"(offset_pair)
        : "cc", "memory");
  }
  auto* last = reinterpret_cast<int16_t*>(dst);
  for (int32_t k = 0; k < (in_c & 3); ++k) {
    const int32_t half = ((k & 1) << 1) + ((k >> 1) & 1);  // (k, k+2), (k+1, k+3)
    last[half] = int16_t(a[k] + offset);
    last[4 + half] = int16_t(b[k] + offset);
  }
}

constexpr int32_t kPwSteps = 16;  // the multiply loop written out: DS-CNN's 64 channels in one pass of it

// What the pass's assembly copies onto the stack (field offsets fixed in it): every register is
// taken by the multiply loop.
struct PwFrame {
  int32_t entry;           // 0: the multiply loop's first step, (kPwSteps - groups % kPwSteps) % kPwSteps
  const int32_t* x_end;    // 4: past the pair's expanded inputs
  const int32_t* scratch;  // 8
  int8_t* out0;            // 12: pixel 0's output of the next channel pair
  int8_t* out1;            // 16: pixel 1's
  const int32_t* w_end;    // 20: past the prepared input
};
static_assert(sizeof(PwFrame) == 24, "the assembly addresses the fields by these offsets");

// Every channel pair of one pass of two pixels on the fast path (all channels fast, int8's own
// clamp, out_c even): accumulators from acc_init, the multiply loop (written out kPwSteps steps of
// 10 instructions per 16 multiply-accumulates, entered at step `entry` by TBH), then per output
// SMMLAR, the tie step, ASR, SSAT and a post-incremented byte store.
inline void fast_pass(const PwFrame& frame, const int32_t* w) {
  register int32_t x0 __asm__("r4"), x1 __asm__("r5"), x2 __asm__("r6"), x3 __asm__("r8");  // LDM list order
  register int32_t w0 __asm__("r9"), w1 __asm__("r10"), w2 __asm__("r11"), w3 __asm__("r12");
  const int32_t* x = reinterpret_cast<const int32_t*>(&frame);  // the frame first, then the inputs
  int32_t a00, a01, a10, a11;  // a<pixel><channel>
#define MCUFLOW_DSP_PW_STEP                                  \
  "ldmia %[x]!, {%[x0], %[x1], %[x2], %[x3]}\n\t"            \
  "ldmia %[w]!, {%[w0], %[w1], %[w2], %[w3]}\n\t"            \
  "smlad %[a00], %[x0], %[w0], %[a00]\n\t"                   \
  "smlad %[a00], %[x1], %[w1], %[a00]\n\t"                   \
  "smlad %[a01], %[x0], %[w2], %[a01]\n\t"                   \
  "smlad %[a01], %[x1], %[w3], %[a01]\n\t"                   \
  "smlad %[a10], %[x2], %[w0], %[a10]\n\t"                   \
  "smlad %[a10], %[x3], %[w1], %[a10]\n\t"                   \
  "smlad %[a11], %[x2], %[w2], %[a11]\n\t"                   \
  "smlad %[a11], %[x3], %[w3], %[a11]\n\t"
  // x (free after the loop) holds each output on its way out.
#define MCUFLOW_DSP_PW_OUTPUT(a, m, r, e, out)               \
  "smmlar %[x], %[" a "], %[" m "], %[" r "]\n\t"            \
  "add %[x], %[x], %[" a "], asr #31\n\t"                    \
  "asr %[x], %[x], %[" e "]\n\t"                             \
  "ssat %[x], #8, %[x]\n\t"                                  \
  "strb %[x], [%[" out "]], #1\n\t"
  __asm__ volatile(  // volatile: its results are the bytes stored
      "ldm %[x], {%[x0], %[x1], %[x2], %[x3], %[w0], %[w1]}\n\t"
      "push {%[x0], %[x1], %[x2], %[x3], %[w0], %[w1]}\n\t"
      "0:\n\t"
      "ldrd %[a00], %[a01], [%[w]], #8\n\t"
      "mov %[a10], %[a00]\n\t"
      "mov %[a11], %[a01]\n\t"
      "ldr %[x], [sp, #8]\n\t"
      "ldr %[x0], [sp]\n\t"
      "tbh [pc, %[x0], lsl #1]\n\t"
      "5:\n\t"
      ".hword (10f-5b)/2, (11f-5b)/2, (12f-5b)/2, (13f-5b)/2, (14f-5b)/2, (15f-5b)/2, (16f-5b)/2, (17f-5b)/2\n\t"
      ".hword (18f-5b)/2, (19f-5b)/2, (20f-5b)/2, (21f-5b)/2, (22f-5b)/2, (23f-5b)/2, (24f-5b)/2, (25f-5b)/2\n\t"
      "10:\n\t" MCUFLOW_DSP_PW_STEP "11:\n\t" MCUFLOW_DSP_PW_STEP "12:\n\t" MCUFLOW_DSP_PW_STEP
      "13:\n\t" MCUFLOW_DSP_PW_STEP "14:\n\t" MCUFLOW_DSP_PW_STEP "15:\n\t" MCUFLOW_DSP_PW_STEP
      "16:\n\t" MCUFLOW_DSP_PW_STEP "17:\n\t" MCUFLOW_DSP_PW_STEP "18:\n\t" MCUFLOW_DSP_PW_STEP
      "19:\n\t" MCUFLOW_DSP_PW_STEP "20:\n\t" MCUFLOW_DSP_PW_STEP "21:\n\t" MCUFLOW_DSP_PW_STEP
      "22:\n\t" MCUFLOW_DSP_PW_STEP "23:\n\t" MCUFLOW_DSP_PW_STEP "24:\n\t" MCUFLOW_DSP_PW_STEP
      "25:\n\t" MCUFLOW_DSP_PW_STEP
      "ldr %[x0], [sp, #4]\n\t"
      "cmp %[x], %[x0]\n\t"
      "bne 10b\n\t"
      "ldmia %[w]!, {%[x0], %[x1], %[x2], %[x3], %[w0], %[w1]}\n\t"  // multiplier, rounding, shift of each
      "ldrd %[w2], %[w3], [sp, #12]\n\t"
      MCUFLOW_DSP_PW_OUTPUT("a00", "x0", "x1", "x2", "w2")
      MCUFLOW_DSP_PW_OUTPUT("a01", "x3", "w0", "w1", "w2")
      MCUFLOW_DSP_PW_OUTPUT("a10", "x0", "x1", "x2", "w3")
      MCUFLOW_DSP_PW_OUTPUT("a11", "x3", "w0", "w1", "w3")
      "strd %[w2], %[w3], [sp, #12]\n\t"
      "ldr %[x0], [sp, #20]\n\t"
      "cmp %[w], %[x0]\n\t"
      "bne 0b\n\t"
      "add sp, sp, #24"
      : [x] "+r"(x), [w] "+r"(w), [a00] "=&r"(a00), [a01] "=&r"(a01), [a10] "=&r"(a10), [a11] "=&r"(a11),
        [x0] "=&r"(x0), [x1] "=&r"(x1), [x2] "=&r"(x2), [x3] "=&r"(x3), [w0] "=&r"(w0), [w1] "=&r"(w1),
        [w2] "=&r"(w2), [w3] "=&r"(w3)
      :
      : "cc", "memory");
#undef MCUFLOW_DSP_PW_STEP
#undef MCUFLOW_DSP_PW_OUTPUT
}

// Any pass of `pixels` (1 or 2) pixels, any channels and clamp: the prepared accumulator
// starts and weights, each channel's requantization on either path (dsp_requantize).
void general_pass(const ConvParams& p, const int32_t* prepared, const int32_t* bias, const int32_t* shifts,
                  const int16_t* scratch, int32_t pixels, int8_t* out) {
  const dsp::Output o{p.out.output_offset, p.out.act_min, p.out.act_max, p.in_c};
  const int32_t groups = dsp_pw_groups(p), pair_words = dsp_pw_pair_words(p);
  const auto* x = reinterpret_cast<const int32_t*>(scratch);
  for (int32_t c = 0; c < p.out_c; c += 2, prepared += pair_words) {
    const int32_t* w = prepared + 2;
    int32_t acc[kDspPwPixels][2] = {{prepared[0], prepared[1]}, {prepared[0], prepared[1]}};
    for (int32_t g = 0; g < groups; ++g, w += 4) {
      for (int32_t i = 0; i < pixels; ++i) {
        const int32_t* xi = x + 4 * g + 2 * i;
        acc[i][0] = __smlad(xi[1], w[1], __smlad(xi[0], w[0], acc[i][0]));
        acc[i][1] = __smlad(xi[1], w[3], __smlad(xi[0], w[2], acc[i][1]));
      }
    }
    for (int32_t j = 0; j < 2 && c + j < p.out_c; ++j, w += 3) {
      const DspChannel ch{prepared[j], w[0], w[1], w[2], bias[c + j], shifts[c + j]};
      for (int32_t i = 0; i < pixels; ++i) out[i * p.out_c + c + j] = int8_t(dsp::output_value<false>(acc[i][j], ch, o));
    }
  }
}

// The fast path's conditions (fast_pass).
bool all_fast(const ConvParams& p, const int32_t* prepared) {
  if (p.out.act_min != -128 || p.out.act_max != 127 || p.out_c % 2 != 0) return false;
  const int32_t pair_words = dsp_pw_pair_words(p), shift0 = pair_words - 4;  // right_shift of the pair's first
  for (int32_t c = 0; c < p.out_c; c += 2, prepared += pair_words) {
    if (prepared[shift0] < 0 || prepared[shift0 + 3] < 0) return false;
  }
  return true;
}

}  // namespace

void conv_s8_1x1_dsp(const ConvParams& p, const int8_t* input, const int32_t* prepared, const int32_t* bias,
                     const int32_t* shifts, int16_t* scratch, int8_t* output) {
  const int32_t pixels = p.out_h * p.out_w, groups = dsp_pw_groups(p);
  const bool fast = all_fast(p, prepared);
  const auto* words = reinterpret_cast<const int32_t*>(scratch);
  PwFrame frame{(kPwSteps - groups % kPwSteps) % kPwSteps, words + 4 * groups, words, nullptr, nullptr,
                prepared + dsp_pw_prepared_words(p)};
  int32_t oy = 0, ox = 0;  // the next output pixel
  for (int32_t first = 0; first < pixels; first += kDspPwPixels) {
    const int32_t count = pixels - first < kDspPwPixels ? pixels - first : kDspPwPixels;
    const int8_t* pixel[kDspPwPixels];
    for (int32_t slot = 0; slot < count; ++slot) {
      pixel[slot] = input + (oy * p.stride_h * p.in_w + ox * p.stride_w) * p.in_c;
      if (++ox == p.out_w) ox = 0, ++oy;
    }
    expand_pair(pixel[0], pixel[count - 1], p.in_c, p.input_offset, scratch);  // a last pixel alone: twice
    int8_t* out = output + first * p.out_c;
    if (fast && count == kDspPwPixels) {
      frame.out0 = out;
      frame.out1 = out + p.out_c;
      fast_pass(frame, prepared);
    } else {
      general_pass(p, prepared, bias, shifts, scratch, count, out);
    }
  }
}

}  // namespace mcuflow::kernels
