// Depthwise 3x3 convolution (ch_mult 1, stride_w 1), int8, DSP extension: input rows are
// transposed once into channel-major int16 rows (kernels_dsp.h); then per channel, each pair
// of output pixels takes per kernel row the words of columns x..x+1 and x+2..x+3 and four
// multiplies: an SMLAD and an SMLAxy for each pixel (fast_row, which requantizes the pair in
// registers; dw3_output_row on the general path).
#include "dsp_blocks.h"

namespace mcuflow::kernels {
namespace {

// The words v0, v1 of two pixels (four channels each) as the four channels' column pairs,
// stored at the addresses at0 .. at3 (each with its brackets): four SXTAB16 adding the offset,
// four PKH.
#define MCUFLOW_DSP_DW3_TRANSPOSE(at0, at1, at2, at3)  \
  "sxtab16 %[e0], %[off], %[v0]\n\t"                  \
  "sxtab16 %[v0], %[off], %[v0], ror #8\n\t"          \
  "sxtab16 %[e1], %[off], %[v1]\n\t"                  \
  "sxtab16 %[v1], %[off], %[v1], ror #8\n\t"          \
  "pkhbt %[t], %[e0], %[e1], lsl #16\n\t"             \
  "str %[t], " at0 "\n\t" /* channel 4g */            \
  "pkhbt %[t], %[v0], %[v1], lsl #16\n\t"             \
  "str %[t], " at1 "\n\t" /* 4g + 1 */                \
  "pkhtb %[t], %[e1], %[e0], asr #16\n\t"             \
  "str %[t], " at2 "\n\t" /* 4g + 2 */                \
  "pkhtb %[t], %[v1], %[v0], asr #16\n\t"             \
  "str %[t], " at3 "\n\t" /* 4g + 3 */

// Columns j, j+1 of `groups` >= 1 groups of four channels from the words at src0 and src1
// (moving on by step0 and step1 bytes a group: 4 for an input pixel, 0 for a padding word): per
// group one word of each, four SXTAB16 and four PKH, a word stored in each of the four channels'
// rows (word_bytes apart): 20 instructions per group, as GCC spilled half of them.
__attribute__((noinline)) void fill_pair(const int8_t* src0, const int8_t* src1, int32_t step0, int32_t step1,
                                         int32_t groups, int32_t offset_pair, int32_t word_bytes, int32_t* dst) {
  int32_t* dst2 = dst + 2 * (word_bytes / 4);  // channel 4g + 2's row
  int32_t v0, v1, e0, e1, t;
  __asm__ volatile(  // volatile: its results are the words stored
      "1:\n\t"
      "ldr %[v0], [%[src0]]\n\t"
      "ldr %[v1], [%[src1]]\n\t"
      "add %[src0], %[src0], %[step0]\n\t"
      "add %[src1], %[src1], %[step1]\n\t"
      MCUFLOW_DSP_DW3_TRANSPOSE("[%[dst]]", "[%[dst], %[one]]", "[%[dst2]]", "[%[dst2], %[one]]")
      "add %[dst], %[dst], %[one], lsl #2\n\t"
      "add %[dst2], %[dst2], %[one], lsl #2\n\t"
      "subs %[groups], %[groups], #1\n\t"
      "bne 1b"
      : [src0] "+r"(src0), [src1] "+r"(src1), [dst] "+r"(dst), [dst2] "+r"(dst2), [groups] "+r"(groups),
        [v0] "=&r"(v0), [v1] "=&r"(v1), [e0] "=&r"(e0), [e1] "=&r"(e1), [t] "=&r"(t)
      : [step0] "r"(step0), [step1] "r"(step1), [off] "r"(offset_pair), [one] "r"(word_bytes)
      : "cc", "memory");
}

// What fill_inside_pairs' assembly reads from memory: its loops take every register.
struct InsidePairsFrame {
  int32_t groups;
  int32_t pixel_step;  // from past a pair's last group to the next pair's first pixel
  int32_t dst_back;    // from past a pair's last group to the next pair's word in channel 0's row
};

// `pairs` >= 1 consecutive pairs of columns j, j+1 of one input row, both columns inside the
// input (from the input pixel at `pixel` on, in_c bytes apart), `groups` >= 1 groups of four
// channels each: as fill_pair, with the second pixel's word at a register offset from the
// first's: 17 instructions per group.
__attribute__((noinline)) void fill_inside_pairs(const int8_t* pixel, int32_t in_c, int32_t pairs, int32_t groups,
                                                 int32_t offset_pair, int32_t word_bytes, int32_t* dst) {
  const InsidePairsFrame f{groups, 2 * in_c - 4 * groups, 4 * word_bytes * groups - 4};  // on the stack
  const int32_t two_words = 2 * word_bytes, three_words = 3 * word_bytes;
  int32_t n, v0, v1, e0, e1, t;
  __asm__ volatile(  // volatile: its results are the words stored
      "0:\n\t"
      "ldr %[n], %[groups]\n\t"
      "1:\n\t"
      "ldr %[v1], [%[pixel], %[in_c]]\n\t"
      "ldr %[v0], [%[pixel]], #4\n\t"
      MCUFLOW_DSP_DW3_TRANSPOSE("[%[dst]]", "[%[dst], %[one]]", "[%[dst], %[two]]", "[%[dst], %[three]]")
      "add %[dst], %[dst], %[one], lsl #2\n\t"
      "subs %[n], %[n], #1\n\t"
      "bne 1b\n\t"
      "ldr %[t], %[pixel_step]\n\t"
      "add %[pixel], %[pixel], %[t]\n\t"
      "ldr %[t], %[dst_back]\n\t"
      "sub %[dst], %[dst], %[t]\n\t"
      "subs %[pairs], %[pairs], #1\n\t"
      "bne 0b"
      : [pixel] "+r"(pixel), [dst] "+r"(dst), [pairs] "+r"(pairs), [n] "=&r"(n), [v0] "=&r"(v0), [v1] "=&r"(v1),
        [e0] "=&r"(e0), [e1] "=&r"(e1), [t] "=&r"(t)
      : [in_c] "r"(in_c), [off] "r"(offset_pair), [one] "r"(word_bytes), [two] "r"(two_words),
        [three] "r"(three_words), [groups] "m"(f.groups), [pixel_step] "m"(f.pixel_step), [dst_back] "m"(f.dst_back)
      : "cc", "memory");
}
#undef MCUFLOW_DSP_DW3_TRANSPOSE

struct Dw3 {
  DwConvParams p;
  const int8_t* input;
  int16_t* scratch;
  int32_t row_length, chunk_first, chunk_size;

  void clear_rows() const { std::memset(scratch, 0, size_t(3 * chunk_size * row_length) * sizeof(int16_t)); }

  int16_t* row(int32_t channel_in_chunk, int32_t slot) const {
    return scratch + (slot * chunk_size + channel_in_chunk) * row_length;
  }

  // Slot `slot` of every channel of the chunk takes input row iy (zeros outside the input).
  // Each pair of columns j, j+1 reads two pixels, a padding column a word of zero points
  // that stays in place (step 0) while an input pixel's pointer moves on by four channels:
  // every pair takes the same branch-free loop (fill_pair; fill_inside_pairs for a run of pairs
  // inside the input). Padding columns of the chunk's last channels and pairs of two padding
  // columns are left as they are: zero since the chunk began (clear_rows), as no row writes them.
  void fill(int32_t iy, int32_t slot) const {
    const int32_t offset = p.input_offset;
    if (iy < 0 || iy >= p.in_h) {
      std::memset(row(0, slot), 0, size_t(chunk_size * row_length) * sizeof(int16_t));
      return;
    }
    const int32_t offset_pair = int32_t((uint32_t(offset) & 0xFFFFu) * 0x10001u);
    const int32_t zero_points = int32_t(uint32_t(uint8_t(-offset)) * 0x01010101u);  // x - zero point = 0
    const int8_t* padding = reinterpret_cast<const int8_t*>(&zero_points);
    const int32_t groups = chunk_size / 4, word_stride = row_length / 2;  // between channels' rows, in words
    const int8_t* pixel_row = input + iy * p.in_w * p.in_c + chunk_first;
    int32_t* words = reinterpret_cast<int32_t*>(row(0, slot));  // channel 0's row, a pair per word
    for (int32_t j = 0; groups > 0 && j < row_length; j += 2) {  // columns j, j+1: input columns ix, ix+1
      const int32_t ix = j - p.pad_left;
      const bool inside0 = ix >= 0 && ix < p.in_w, inside1 = ix + 1 >= 0 && ix + 1 < p.in_w;
      if (inside0 && inside1) {  // this pair and the next ones inside the input, in one call
        const int32_t in_input = (p.in_w - ix) / 2, in_row = (row_length - j) / 2;
        const int32_t run = in_input < in_row ? in_input : in_row;
        fill_inside_pairs(pixel_row + ix * p.in_c, p.in_c, run, groups, offset_pair, 4 * word_stride, words + j / 2);
        j += 2 * (run - 1);
      } else if (inside0 || inside1) {
        fill_pair(inside0 ? pixel_row + ix * p.in_c : padding, inside1 ? pixel_row + (ix + 1) * p.in_c : padding,
                  inside0 ? 4 : 0, inside1 ? 4 : 0, groups, offset_pair, 4 * word_stride, words + j / 2);
      }
    }
    for (int32_t c = 4 * groups; c < chunk_size; ++c) {  // the last chunk_size % 4 channels' inside columns
      for (int32_t j = 0; j < row_length; ++j) {
        const int32_t ix = j - p.pad_left;
        if (ix >= 0 && ix < p.in_w) row(c, slot)[j] = int16_t(pixel_row[ix * p.in_c + c] + offset);
      }
    }
  }
};

// Channels first..first+count-1 of one output row from their accumulators (channel after
// channel, acc_stride apart) and their requantization (channels[0 .. count), derived once per
// chunk), stored at out[x * pixel_stride + channel]: the general path.
void requantize_row(const dsp::Output& o, const DspChannel* channels, int32_t first, int32_t count, const int32_t* acc,
                    int32_t acc_stride, int32_t out_w, int32_t pixel_stride, int8_t* out) {
  for (int32_t c = first; c < first + count; ++c, acc += acc_stride, ++channels) {
    const DspChannel ch = *channels;
    const int32_t* a = acc;
    int8_t* dst = out + c;
    auto value = [&](int32_t acc2) { return int8_t(dsp::output_value<false>(acc2 + ch.acc_init, ch, o)); };
    int32_t x = out_w;
    for (; x >= 2; x -= 2, a += 2, dst += 2 * pixel_stride) {  // two at a time: half the loop steps
      dst[0] = value(a[0]);
      dst[pixel_stride] = value(a[1]);
    }
    if (x) *dst = value(a[0]);
  }
}

// One output row (out_w >= 2) of the chunk's channels on the fast path, each channel's outputs
// requantized as soon as its pair is summed (records: kernels_dsp.h). Per pair x, x+1 and kernel
// row y one LDRD of the words A = (x, x+1), C = (x+2, x+3) (C is the next pair's A: the row
// pointer moves on by one word) and of the weight pairs (wy0, wy1), (wy1, wy2): pixel x is
// SMLAD(A, (wy0, wy1)) + C.bottom * wy2, pixel x+1 A.top * wy0 + SMLAD(C, (wy1, wy2)); kernel row
// 0's LDM also loads acc_init into the accumulator both pixels start from (and the record's pair
// count into y, unused there). Then per output SMMLAR, the tie step, ASR, SSAT and a byte store:
// 33 instructions per pair; a last pixel (kOdd) takes two multiplies per kernel row, 19 in all.
// Loading the next record's pair count moves on to that record, the zero past the last one ending
// the loop. Not inlined: the caller's registers would leave the assembly one short.
template <bool kOdd>
__attribute__((noinline)) void fast_row(int32_t back, const int16_t* r0, const int16_t* r1, const int16_t* r2,
                                        const int32_t* records, int32_t pixel_stride, int8_t* out) {
  // back: from past a channel's last pair to the next channel's first output; on the stack, as
  // every register is taken by the loops.
  const int32_t back_bytes = back;
  register int32_t y __asm__("r3"), a1 __asm__("r4"), p __asm__("r5"), q __asm__("r6");  // LDM list order
  int32_t a0, a, c, n;
#define MCUFLOW_DSP_DW3_MACS(row)                 \
  "ldrd %[a], %[c], [%[" row "]], #4\n\t"         \
  "smlad %[a0], %[a], %[p], %[a0]\n\t"            \
  "smlatb %[a1], %[a], %[p], %[a1]\n\t"           \
  "smlabt %[a0], %[c], %[q], %[a0]\n\t"           \
  "smlad %[a1], %[c], %[q], %[a1]\n\t"
#define MCUFLOW_DSP_DW3_PIXEL_MACS(row)           \
  "ldrd %[a], %[c], [%[" row "]], #8\n\t" /* on to the next channel's row */ \
  "smlad %[a0], %[a], %[p], %[a0]\n\t"            \
  "smlabt %[a0], %[c], %[q], %[a0]\n\t"
#define MCUFLOW_DSP_DW3_CONSTANTS                 \
  "ldrd %[p], %[q], [%[rec], #32]\n\t" /* multiplier, rounding */ \
  "ldr %[a], [%[rec], #40]\n\t"        /* right_shift */
#define MCUFLOW_DSP_DW3_PIXEL_SUMS                \
  "ldm %[rec], {%[y], %[a1], %[p], %[q]}\n\t"           \
  "ldrd %[a], %[c], [%[r0]], #8\n\t"              \
  "smlad %[a0], %[a], %[p], %[a1]\n\t"            \
  "smlabt %[a0], %[c], %[q], %[a0]\n\t"           \
  "ldrd %[p], %[q], [%[rec], #16]\n\t"            \
  MCUFLOW_DSP_DW3_PIXEL_MACS("r1")                \
  "ldrd %[p], %[q], [%[rec], #24]\n\t"            \
  MCUFLOW_DSP_DW3_PIXEL_MACS("r2")                \
  MCUFLOW_DSP_DW3_CONSTANTS
#define MCUFLOW_DSP_DW3_PAIR_SUMS                 \
  "ldm %[rec], {%[y], %[a1], %[p], %[q]}\n\t"           \
  "ldrd %[a], %[c], [%[r0]], #4\n\t"              \
  "smlad %[a0], %[a], %[p], %[a1]\n\t"            \
  "smlatb %[a1], %[a], %[p], %[a1]\n\t"           \
  "smlabt %[a0], %[c], %[q], %[a0]\n\t"           \
  "smlad %[a1], %[c], %[q], %[a1]\n\t"            \
  "ldrd %[p], %[q], [%[rec], #16]\n\t"            \
  MCUFLOW_DSP_DW3_MACS("r1")                      \
  "ldrd %[p], %[q], [%[rec], #24]\n\t"            \
  MCUFLOW_DSP_DW3_MACS("r2")                      \
  MCUFLOW_DSP_DW3_CONSTANTS
#define MCUFLOW_DSP_DW3_OUTPUT(acc)               \
  "smmlar %[y], %[" acc "], %[p], %[q]\n\t"       \
  "add %[y], %[y], %[" acc "], asr #31\n\t"       \
  "asr %[y], %[y], %[a]\n\t"                      \
  "ssat %[y], #8, %[y]\n\t"
  __asm__ volatile(  // volatile: its results are the bytes stored
      "ldr %[n], [%[rec]]\n\t"
      "1:\n\t" MCUFLOW_DSP_DW3_PAIR_SUMS
      MCUFLOW_DSP_DW3_OUTPUT("a0") "strb %[y], [%[out]]\n\t"
      MCUFLOW_DSP_DW3_OUTPUT("a1") "strb %[y], [%[out], %[stride]]\n\t"
      "add %[out], %[out], %[stride], lsl #1\n\t"
      "subs %[n], %[n], #1\n\t"
      "bne 1b\n\t"
      ".if %c[odd]\n\t" MCUFLOW_DSP_DW3_PIXEL_SUMS
      MCUFLOW_DSP_DW3_OUTPUT("a0") "strb %[y], [%[out]]\n\t"
      ".else\n\t"  // on to the next channel's rows
      "add %[r0], %[r0], #8\n\t"
      "add %[r1], %[r1], #8\n\t"
      "add %[r2], %[r2], #8\n\t"
      ".endif\n\t"
      "ldr %[y], %[back]\n\t"
      "sub %[out], %[out], %[y]\n\t"
      "ldr %[n], [%[rec], %[record]]!\n\t"
      "cmp %[n], #0\n\t"
      "bne 1b"
      : [r0] "+r"(r0), [r1] "+r"(r1), [r2] "+r"(r2), [rec] "+r"(records), [out] "+r"(out), [a0] "=&r"(a0),
        [a1] "=&r"(a1), [p] "=&r"(p), [q] "=&r"(q), [a] "=&r"(a), [c] "=&r"(c), [y] "=&r"(y), [n] "=&r"(n)
      : [stride] "r"(pixel_stride), [odd] "i"(kOdd ? 1 : 0), [back] "m"(back_bytes),
        [record] "i"(kDspDw3RecordWords * 4)
      : "cc", "memory");
#undef MCUFLOW_DSP_DW3_MACS
#undef MCUFLOW_DSP_DW3_PAIR_SUMS
#undef MCUFLOW_DSP_DW3_PIXEL_MACS
#undef MCUFLOW_DSP_DW3_PIXEL_SUMS
#undef MCUFLOW_DSP_DW3_CONSTANTS
#undef MCUFLOW_DSP_DW3_OUTPUT
}

template <bool kFast>
void run(const DwConvParams& params, const dsp::Output& o, const DspTables& t, const int8_t* input,
         const int32_t* weights, int16_t* scratch, int8_t* output) {
  Dw3 d{params, input, scratch, dsp_dw3_row_length(params), 0, 0};
  const DwConvParams& p = d.p;
  const int32_t chunk = dsp_dw3_chunk(p), pixel_stride = p.out_c;
  // Whole pairs of output pixels and an odd last one.
  const int32_t pairs = p.out_w / 2, odd = p.out_w % 2;
  for (d.chunk_first = 0; d.chunk_first < p.out_c; d.chunk_first += chunk) {
    d.chunk_size = p.out_c - d.chunk_first < chunk ? p.out_c - d.chunk_first : chunk;
    int32_t held[3] = {kInt32Min, kInt32Min, kInt32Min};  // the input row in each slot
    d.clear_rows();
    int32_t* acc = reinterpret_cast<int32_t*>(scratch + chunk * 3 * d.row_length);
    const int32_t* chunk_weights = weights + kDspDw3WeightWords * d.chunk_first;
    // The channels' requantization and the records end where the scratch does, on either path: a
    // run writes the plan's last byte (the painted high water equals the plan).
    int32_t* const area_end =
        reinterpret_cast<int32_t*>(reinterpret_cast<uint8_t*>(scratch) + dsp_dw3_scratch_bytes(p));
    DspChannel* channels = reinterpret_cast<DspChannel*>(area_end) - d.chunk_size;
    int32_t* records = area_end - (kDspDw3RecordWords * d.chunk_size + 1);
    for (int32_t c = 0; c < d.chunk_size; ++c) {
      const DspChannel ch = dsp::channel<kFast>(t, d.chunk_first + c, o);
      if constexpr (kFast) {
        int32_t* record = records + kDspDw3RecordWords * c;
        record[0] = pairs;
        record[1] = ch.acc_init;
        const int32_t* w = chunk_weights + kDspDw3WeightWords * c;
        for (int32_t k = 0; k < kDspDw3WeightWords; ++k) record[2 + k] = w[k];
        record[8] = ch.multiplier;
        record[9] = ch.rounding;
        record[10] = ch.right_shift;
      } else {
        channels[c] = ch;
      }
    }
    if constexpr (kFast) records[kDspDw3RecordWords * d.chunk_size] = 0;  // ends fast_row's channel loop
    const int32_t back = 2 * pairs * pixel_stride - 1;
    for (int32_t oy = 0; oy < p.out_h; ++oy) {
      int32_t slot[3];
      for (int32_t ky = 0; ky < 3; ++ky) {
        const int32_t iy = oy * p.stride_h - p.pad_top + ky;
        slot[ky] = (iy % 3 + 3) % 3;
        if (held[slot[ky]] != iy) {
          d.fill(iy, slot[ky]);
          held[slot[ky]] = iy;
        }
      }
      int8_t* out_row = output + oy * p.out_w * pixel_stride;
      if constexpr (kFast) {
        const auto row = odd ? fast_row<true> : fast_row<false>;
        row(back, d.row(0, slot[0]), d.row(0, slot[1]), d.row(0, slot[2]), records, pixel_stride,
            out_row + d.chunk_first);
      } else {
        // A single pixel runs as one pair, half used.
        const int32_t whole = p.out_w > 1 ? pairs : 1;
        const bool last = p.out_w > 1 && odd;
        dsp::dw3_output_row(d.chunk_size, whole, last, d.row(0, slot[0]), d.row(0, slot[1]), d.row(0, slot[2]),
                            d.row_length, chunk_weights, acc);
        requantize_row(o, channels, d.chunk_first, d.chunk_size, acc, 2 * (whole + last), p.out_w, pixel_stride,
                       out_row);
      }
    }
  }
}

}  // namespace

void dwconv_s8_3x3_dsp(const DwConvParams& p, const int8_t* input, const int32_t* prepared, const int32_t* bias,
                       const int32_t* multipliers, const int32_t* shifts, int16_t* scratch, int8_t* output) {
  const dsp::Output o{p.out.output_offset, p.out.act_min, p.out.act_max, 9};
  const DspTables t{bias, multipliers, shifts, 1};
  // A single output column has no pair for fast_row: the general path, on either requantization.
  if (p.out_w > 1 && dsp::fast_outputs(o, t, p.out_c)) run<true>(p, o, t, input, prepared, scratch, output);
  else run<false>(p, o, t, input, prepared, scratch, output);
}

}  // namespace mcuflow::kernels
