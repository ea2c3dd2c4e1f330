// Average pooling, int8, DSP extension: window sums of eight channels at a time, two word loads
// per pixel, each word split by SXTAB16 into channels (c, c+2) and (c+1, c+3) added into 16-bit
// halves. A half holds the sum of up to kPoolLanePixels int8 values exactly, so the window is
// summed in blocks of at most that many pixels, each block's halves added into int32 totals.
// The division is the reference's (SDIV, rounding half away from zero) per channel.
#include "mcuflow/kernels/kernels_dsp.h"
#include "mcuflow/kernels/pool_window.h"

namespace mcuflow::kernels {
namespace {

constexpr int32_t kWordsPerPass = 2;  // eight channels

// totals[j] += the block's sum of channel j (j < 4 * kWords), for the channels starting at x.
template <int32_t kWords>
void add_block_sums(const int8_t* x, int32_t rows, int32_t cols, int32_t channels, int32_t row_step,
                    int32_t* totals) {
  int32_t even[kWords] = {}, odd[kWords] = {};
  for (int32_t r = 0; r < rows; ++r, x += row_step) {
    const int8_t* px = x;
    for (int32_t i = 0; i < cols; ++i, px += channels) {
      for (int32_t w = 0; w < kWords; ++w) {
        const int32_t v = dsp::read_word(px + 4 * w);
        even[w] = __sxtab16(even[w], v);
        odd[w] = dsp::sxtab16_odd(odd[w], v);
      }
    }
  }
  for (int32_t w = 0; w < kWords; ++w, totals += 4) {
    totals[0] += int16_t(even[w]);
    totals[1] += int16_t(odd[w]);
    totals[2] += even[w] >> 16;
    totals[3] += odd[w] >> 16;
  }
}

template <int32_t kWords>
void average_channels(const PoolParams& p, const PoolWindow& window, int32_t c, int8_t* out) {
  int32_t totals[4 * kWords] = {};
  window.for_each_block(kPoolLanePixels, p.c, [&](const int8_t* first, int32_t rows, int32_t cols) {
    add_block_sums<kWords>(first + c, rows, cols, p.c, window.row_step, totals);
  });
  for (int32_t j = 0; j < 4 * kWords; ++j) out[c + j] = pool_average(totals[j], window.count, p.act_min, p.act_max);
}

}  // namespace

void avgpool_s8_dsp(const PoolParams& params, const int8_t* input, int8_t* output) {
  const PoolParams p = params;  // a copy: the output stores could alias the fields otherwise
  for (int32_t oy = 0; oy < p.out_h; ++oy) {
    for (int32_t ox = 0; ox < p.out_w; ++ox, output += p.c) {
      const PoolWindow window = pool_window(p, input, oy, ox);
      int32_t c = 0;
      for (; c + 4 * kWordsPerPass <= p.c; c += 4 * kWordsPerPass) average_channels<kWordsPerPass>(p, window, c, output);
      for (; c + 4 <= p.c; c += 4) average_channels<1>(p, window, c, output);
      for (; c < p.c; ++c) {  // the last 1-3 channels, one by one
        int32_t sum = 0;
        for (int32_t r = 0; r < window.rows; ++r) {
          for (int32_t i = 0; i < window.cols; ++i) sum += window.first[r * window.row_step + i * p.c + c];
        }
        output[c] = pool_average(sum, window.count, p.act_min, p.act_max);
      }
    }
  }
}

}  // namespace mcuflow::kernels
