// Softmax, int16, DSP: softmax_s16.h's steps with the row max two values per word (SSUB16 sets
// each half's GE flags where x >= max, SEL keeps those halves), each exp entry pair read as one
// word and blended by one SMLAD (dsp::lut_s16_at), and both caps by USAT: the table input
// (d * M + 2^(k-1)) >> k and the output (e * inv + 2^(shift-1)) >> shift are below 2^31 (k >= 1,
// shift >= 15), so USAT #16 and #15 give exactly their min with 65535 and 32767. The outputs two
// per word.
#include "dsp_blocks.h"
#include "mcuflow/kernels/softmax_s16.h"

namespace mcuflow::kernels {
namespace {

int32_t row_max(const int16_t* in, int32_t depth) {
  int32_t pair_max = int32_t(0x80008000u);  // -32768 in both halves
  int32_t i = 0;
  for (; i + 2 <= depth; i += 2) {
    const int32_t x = dsp::read_word(in + i);
    __ssub16(x, pair_max);
    pair_max = __sel(x, pair_max);
  }
  const int32_t low = int16_t(pair_max), high = pair_max >> 16;
  int32_t m = low > high ? low : high;
  if (i < depth && in[i] > m) m = in[i];
  return m;
}

}  // namespace

void softmax_s16_dsp(const SoftmaxS16Params& p, const int16_t* input, const int16_t* exp_table, int16_t* output) {
  const uint32_t multiplier = uint32_t(p.diff_multiplier), rounding = uint32_t{1} << (p.diff_shift - 1);
  const int32_t diff_shift = p.diff_shift, depth = p.depth;  // locals: the stores cannot change them
  for (int32_t r = 0; r < p.rows; ++r) {
    const int16_t* in = input + r * depth;
    int16_t* out = output + r * depth;
    const int32_t max_v = row_max(in, depth);
    uint32_t sum = 0;
    for (int32_t i = 0; i < depth; ++i) {
      const uint32_t z = uint32_t(__usat(int32_t((uint32_t(max_v - in[i]) * multiplier + rounding) >> diff_shift), 16));
      const int16_t e = dsp::lut_s16_at(exp_table, z);
      out[i] = e;
      sum += uint32_t(e);
    }
    const SoftmaxS16RowScale scale = softmax_s16_row_scale(sum);
    const uint32_t out_rounding = uint32_t{1} << (scale.shift - 1);
    const auto probability = [&](uint32_t e) {
      return uint32_t(__usat(int32_t((e * scale.inv + out_rounding) >> scale.shift), 15));
    };
    int32_t i = 0;
    for (; i + 2 <= depth; i += 2) {  // two exp values per word, two probabilities back
      const uint32_t pair = uint32_t(dsp::read_word(out + i));
      dsp::write_word(reinterpret_cast<int8_t*>(out + i), probability(pair & 0xFFFFu) | probability(pair >> 16) << 16);
    }
    if (i < depth) out[i] = int16_t(probability(uint32_t(out[i])));
  }
}

}  // namespace mcuflow::kernels
