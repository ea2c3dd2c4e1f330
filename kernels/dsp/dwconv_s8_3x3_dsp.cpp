// Depthwise 3x3 convolution (ch_mult 1, stride_w 1), int8, DSP extension: input rows are
// transposed once into channel-major int16 rows (kernels_dsp.h); then per channel, each pair
// of output pixels takes per kernel row two word loads (columns x..x+1, x+2..x+3) and four
// multiplies: an SMLAD and an SMLAxy for each pixel (dw3_output_row).
#include "dsp_blocks.h"

namespace mcuflow::kernels {
namespace {

struct Dw3 {
  DwConvParams p;
  const int8_t* input;
  int16_t* scratch;
  int32_t row_length, chunk_first, chunk_size;

  int16_t* row(int32_t channel_in_chunk, int32_t slot) const {
    return scratch + (channel_in_chunk * 3 + slot) * row_length;
  }

  // Slot `slot` of every channel of the chunk takes input row iy (zeros outside the input).
  // Each pair of columns j, j+1 reads two pixels, a padding column a word of zero points
  // that stays in place (step 0) while an input pixel's pointer moves on by four channels:
  // every pair takes the same branch-free loop.
  void fill(int32_t iy, int32_t slot) const {
    const int32_t offset = p.input_offset;
    if (iy < 0 || iy >= p.in_h) {
      for (int32_t c = 0; c < chunk_size; ++c) std::memset(row(c, slot), 0, size_t(row_length) * sizeof(int16_t));
      return;
    }
    const int32_t offset_pair = int32_t((uint32_t(offset) & 0xFFFFu) * 0x10001u);
    const int32_t zero_points = int32_t(uint32_t(uint8_t(-offset)) * 0x01010101u);  // x - zero point = 0
    const int8_t* padding = reinterpret_cast<const int8_t*>(&zero_points);
    const int32_t groups = chunk_size / 4, word_stride = 3 * row_length / 2;  // between channels' rows, in words
    const int8_t* pixel_row = input + iy * p.in_w * p.in_c + chunk_first;
    for (int32_t j = 0; j < row_length; j += 2) {  // columns j, j+1: input columns ix, ix+1
      const int32_t ix = j - p.pad_left;
      const bool inside0 = ix >= 0 && ix < p.in_w, inside1 = ix + 1 >= 0 && ix + 1 < p.in_w;
      const int8_t* src0 = inside0 ? pixel_row + ix * p.in_c : padding;
      const int8_t* src1 = inside1 ? pixel_row + (ix + 1) * p.in_c : padding;
      const int32_t step0 = inside0 ? 4 : 0, step1 = inside1 ? 4 : 0;
      int32_t* dst = reinterpret_cast<int32_t*>(row(0, slot) + j);
      for (int32_t g = groups; g > 0; --g, src0 += step0, src1 += step1, dst += 4 * word_stride) {
        const int32_t v0 = dsp::read_word(src0), v1 = dsp::read_word(src1);
        const int32_t e0 = __sxtab16(offset_pair, v0), o0 = dsp::sxtab16_odd(offset_pair, v0);
        const int32_t e1 = __sxtab16(offset_pair, v1), o1 = dsp::sxtab16_odd(offset_pair, v1);
        dst[0] = dsp::pack_low_halves(e0, e1);                    // channel 4g
        dst[word_stride] = dsp::pack_low_halves(o0, o1);          // 4g + 1
        dst[2 * word_stride] = dsp::pack_high_halves(e0, e1);     // 4g + 2
        dst[3 * word_stride] = dsp::pack_high_halves(o0, o1);     // 4g + 3
      }
      for (int32_t c = 4 * groups; c < chunk_size; ++c) {
        row(c, slot)[j] = int16_t(inside0 ? pixel_row[ix * p.in_c + c] + offset : 0);
        row(c, slot)[j + 1] = int16_t(inside1 ? pixel_row[(ix + 1) * p.in_c + c] + offset : 0);
      }
    }
  }
};

// Channels first..first+count-1 of one output row from their accumulators (channel after
// channel, acc_stride apart) and their requantization (channels[0 .. count), derived once per
// chunk), stored at out[x * pixel_stride + channel]. Not inlined: the caller's loops hold on
// to registers this loop wants.
template <bool kFast>
__attribute__((noinline)) void requantize_row(const dsp::Output& o, const DspChannel* channels, int32_t first,
                                              int32_t count, const int32_t* acc, int32_t acc_stride, int32_t out_w,
                                              int32_t pixel_stride, int8_t* out) {
  if constexpr (kFast) {
    // dsp::output_value<true> written out, ten instructions per output: GCC's set-up of each
    // channel's loop cost about as much as five of its outputs. count >= 1, out_w >= 1.
    const int32_t skip = 4 * (acc_stride - out_w);  // bytes of unused accumulators after a channel's
    const int32_t* a = acc;
    int8_t* dst = out + first;
    const DspChannel* const end = channels + count;
    int32_t init, multiplier, rounding, right_shift, v, t, r, n;
    __asm__ volatile(
        "1:\n\t"
        "ldrd %[init], %[multiplier], [%[ch]]\n\t"
        "ldrd %[rounding], %[right_shift], [%[ch], #8]\n\t"
        "mov %[r], %[dst]\n\t"
        "ldr %[n], %[out_w]\n\t"
        "2:\n\t"
        "ldr %[v], [%[a]], #4\n\t"
        "add %[v], %[v], %[init]\n\t"
        "smmlar %[t], %[v], %[multiplier], %[rounding]\n\t"
        "add %[v], %[t], %[v], asr #31\n\t"
        "asr %[v], %[v], %[right_shift]\n\t"
        "ssat %[v], #8, %[v]\n\t"
        "strb %[v], [%[r]]\n\t"
        "add %[r], %[r], %[pixel_stride]\n\t"
        "subs %[n], %[n], #1\n\t"
        "bne 2b\n\t"
        "ldr %[v], %[skip]\n\t"
        "add %[a], %[a], %[v]\n\t"
        "add %[dst], %[dst], #1\n\t"
        "add %[ch], %[ch], %[record]\n\t"
        "ldr %[v], %[end]\n\t"
        "cmp %[ch], %[v]\n\t"
        "bne 1b"
        : [a] "+r"(a), [dst] "+r"(dst), [ch] "+r"(channels), [init] "=&r"(init), [multiplier] "=&r"(multiplier),
          [rounding] "=&r"(rounding), [right_shift] "=&r"(right_shift), [v] "=&r"(v), [t] "=&r"(t), [r] "=&r"(r),
          [n] "=&r"(n)
        : [end] "m"(end), [out_w] "m"(out_w), [pixel_stride] "r"(pixel_stride), [skip] "m"(skip),
          [record] "i"(sizeof(DspChannel))
        : "cc", "memory");
    (void)o;
    return;
  }
  for (int32_t c = first; c < first + count; ++c, acc += acc_stride, ++channels) {
    const DspChannel ch = *channels;
    const int32_t* a = acc;
    int8_t* dst = out + c;
    auto value = [&](int32_t acc2) { return int8_t(dsp::output_value<kFast>(acc2 + ch.acc_init, ch, o)); };
    int32_t x = out_w;
    for (; x >= 2; x -= 2, a += 2, dst += 2 * pixel_stride) {  // two at a time: half the loop steps
      dst[0] = value(a[0]);
      dst[pixel_stride] = value(a[1]);
    }
    if (x) *dst = value(a[0]);
  }
}

template <bool kFast>
void run(const DwConvParams& params, const dsp::Output& o, const DspTables& t, const int8_t* input,
         const int32_t* weights, int16_t* scratch, int8_t* output) {
  Dw3 d{params, input, scratch, dsp_dw3_row_length(params), 0, 0};
  const DwConvParams& p = d.p;
  const int32_t chunk = dsp_dw3_chunk(p), pixel_stride = p.out_c;
  for (d.chunk_first = 0; d.chunk_first < p.out_c; d.chunk_first += chunk) {
    d.chunk_size = p.out_c - d.chunk_first < chunk ? p.out_c - d.chunk_first : chunk;
    int32_t held[3] = {kInt32Min, kInt32Min, kInt32Min};  // the input row in each slot
    int32_t* acc = reinterpret_cast<int32_t*>(scratch + chunk * 3 * d.row_length);
    DspChannel* channels = reinterpret_cast<DspChannel*>(acc + chunk * dsp_dw3_accumulators(p));
    for (int32_t c = 0; c < d.chunk_size; ++c) channels[c] = dsp::channel<kFast>(t, d.chunk_first + c, o);
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
      // Whole pairs of output pixels and an odd last one (a single pixel: one pair, half used).
      const int32_t pairs = p.out_w > 1 ? p.out_w / 2 : 1;
      const bool odd = p.out_w > 1 && p.out_w % 2;
      dsp::dw3_output_row(d.chunk_size, pairs, odd, d.row(0, slot[0]), d.row(0, slot[1]), d.row(0, slot[2]),
                          3 * d.row_length, weights + kDspDw3WeightWords * d.chunk_first, acc);
      requantize_row<kFast>(o, channels, d.chunk_first, d.chunk_size, acc, 2 * (pairs + odd), p.out_w, pixel_stride,
                            output + oy * p.out_w * pixel_stride);
    }
  }
}

}  // namespace

void dwconv_s8_3x3_dsp(const DwConvParams& p, const int8_t* input, const int32_t* prepared, const int32_t* bias,
                       const int32_t* multipliers, const int32_t* shifts, int16_t* scratch, int8_t* output) {
  const dsp::Output o{p.out.output_offset, p.out.act_min, p.out.act_max, 9};
  const DspTables t{bias, multipliers, shifts, 1};
  if (dsp::fast_outputs(o, t, p.out_c)) run<true>(p, o, t, input, prepared, scratch, output);
  else run<false>(p, o, t, input, prepared, scratch, output);
}

}  // namespace mcuflow::kernels
