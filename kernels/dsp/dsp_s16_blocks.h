// Building blocks of the int16-activation DSP kernels (A16W8, kernels_dsp.h), device builds
// only: the int32 path of s16_tiers.h (its weight check, its SMMLAR output stage) and the
// matrix walk of the conv and fc kernels over blocks of kDspPixels expanded windows.
#pragma once
#include "dsp_blocks.h"

#if defined(__ARM_FEATURE_DSP)
#include <type_traits>

namespace mcuflow::kernels::dsp {

// sum |w[i]| for i < n, four weights per USADA8: each byte biased to w + 128, against 128.
inline uint32_t abs_sum_s8(const int8_t* w, int32_t n) {
  uint32_t sum = 0;
  int32_t i = 0;
  for (; i + 4 <= n; i += 4) sum = __usada8(uint32_t(read_word(w + i)) ^ 0x80808080u, 0x80808080u, sum);
  for (; i < n; ++i) sum += uint32_t(w[i] < 0 ? -w[i] : w[i]);
  return sum;
}

// Channel c's bias as int32 (the int32 path's bound holds) and its s16_rounding_factor, for a
// chunk of up to kS16ChannelChunk channels filled once per call and chunk (on the stack).
struct S16Channel {
  int32_t bias, factor;
};
constexpr int32_t kS16ChannelChunk = 64;

// Channels first..first+n-1; channel c's multiplier and shift at c * step.
inline void fill_channels(S16Channel* table, int32_t first, int32_t n, const int64_t* bias, const int32_t* multipliers,
                          const int32_t* shifts, int32_t step) {
  for (int32_t k = 0; k < n; ++k) {
    const int32_t c = first + k;
    table[k] = {bias ? int32_t(bias[c]) : 0, s16_rounding_factor(multipliers[c * step], shifts[c * step])};
  }
}

// The int32 path's output value of accumulator acc (bias included): the output offset plus the
// rounding high multiply by the channel's factor, clamped; kRelu (the clamp is [0, 32767]) by USAT.
template <bool kRelu>
inline int16_t s16_output(int32_t acc, int32_t factor, const OutputStage& o) {
  const int32_t v = smmlar(acc, factor, o.output_offset);
  return int16_t(kRelu ? __usat(v, 15) : clamp_i32(v, o.act_min, o.act_max));
}

// run(std::bool_constant<kRelu>) for the output stage's clamp.
template <typename Run>
inline void with_clamp(const OutputStage& o, Run run) {
  if (o.act_min == 0 && o.act_max == 32767) {
    run(std::true_type{});
  } else {
    run(std::false_type{});
  }
}

// A weighted layer as a matrix: out[r][oc] = requantize(bias[oc] + sum_k a_r[k] * w[oc][k]),
// k < depth; channel oc's multiplier and shift at oc * step (step 0: one for all).
struct S16Matrix {
  const int8_t* weights;
  const int64_t* bias;
  const int32_t* multipliers;
  const int32_t* shifts;
  int32_t step, depth, out_c;
  OutputStage out;

  bool fits_int32() const {
    return s16_gemm_fits_int32(weights, bias, shifts, depth, out_c, step != 0, out, abs_sum_s8);
  }

  // n channels of one block of expanded rows (scratch, depth >= 4), their weight rows from w
  // and their table; rows i < count stored at output + i * out_c.
  template <bool kRelu>
  void block(const S16Channel* table, int32_t n, const int8_t* w, const int16_t* scratch, int32_t count,
             int16_t* output) const {
    const int32_t groups = depth >> 2, tail = depth & 3, stride = out_c;
    const OutputStage o = out;
    for (const S16Channel* const end = table + n; table != end; ++table, ++output) {
      int32_t a0 = table->bias, a1 = a0, a2 = a0, a3 = a0;
      mac_row(groups, tail, w, scratch, a0, a1, a2, a3);
      const int32_t factor = table->factor;
      if (count == kDspPixels) {  // the common case, without per-row tests
        int32_t row_step = stride;
        __asm__("" : "+r"(row_step));  // opaque: GCC would keep a pointer per row on the stack
        int16_t* dst = output;
        dst[0] = s16_output<kRelu>(a0, factor, o);
        dst += row_step;
        dst[0] = s16_output<kRelu>(a1, factor, o);
        dst += row_step;
        dst[0] = s16_output<kRelu>(a2, factor, o);
        dst[row_step] = s16_output<kRelu>(a3, factor, o);
      } else {
        const int32_t acc[kDspPixels] = {a0, a1, a2, a3};
        for (int32_t i = 0; i < count; ++i) output[i * stride] = s16_output<kRelu>(acc[i], factor, o);
      }
    }
  }

  // rows rows in blocks of kDspPixels, row i's slot of its block filled by expand(i, slot),
  // once per chunk of kS16ChannelChunk channels. Slots past a last partial block keep what
  // they held: their outputs are not stored.
  template <typename Expand>
  void run(int32_t rows, int16_t* scratch, int16_t* output, Expand expand) const {
    S16Channel table[kS16ChannelChunk];
    for (int32_t first = 0; first < out_c; first += kS16ChannelChunk) {
      const int32_t n = out_c - first < kS16ChannelChunk ? out_c - first : kS16ChannelChunk;
      fill_channels(table, first, n, bias, multipliers, shifts, step);
      with_clamp(out, [&](auto relu) {
        for (int32_t r = 0; r < rows; r += kDspPixels) {
          const int32_t count = rows - r < kDspPixels ? rows - r : kDspPixels;
          for (int32_t slot = 0; slot < count; ++slot) expand(r + slot, slot);
          block<relu>(table, n, weights + first * depth, scratch, count, output + r * out_c + first);
        }
      });
    }
  }
};

using S16Writer = SlotWriter<kDspPixels, int16_t>;

}  // namespace mcuflow::kernels::dsp

#endif  // __ARM_FEATURE_DSP
