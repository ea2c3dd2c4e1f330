// Max pooling, int8, DSP extension: byte-wise maxima of four channels per word, SSUB8 setting
// the GE flags of the bytes where the new value is at least the current maximum and SEL taking
// those bytes. The running maxima start at act_min (max(act_min, window) is the reference's
// lower clamp); the upper clamp is a byte-wise minimum the same way.
#include "dsp_blocks.h"
#include "mcuflow/kernels/pool_window.h"

namespace mcuflow::kernels {
namespace {

constexpr int32_t kWordsPerPass = 4;  // sixteen channels

inline int32_t max_bytes(int32_t a, int32_t b) {
  __ssub8(a, b);  // GE per byte: a >= b
  return int32_t(__sel(a, b));
}
inline int32_t min_bytes(int32_t a, int32_t b) {
  __ssub8(a, b);
  return int32_t(__sel(b, a));
}

template <int32_t kWords>
void max_channels(const PoolParams& p, const PoolWindow& window, int32_t c, int32_t lo, int32_t hi, int8_t* out) {
  int32_t m[kWords];
  for (int32_t w = 0; w < kWords; ++w) m[w] = lo;
  const int8_t* x = window.first + c;
  for (int32_t r = 0; r < window.rows; ++r, x += window.row_step) {
    const int8_t* px = x;
    const int8_t* end = px + window.cols * p.c;
    if constexpr (kWords == 4) {
      // In assembly: compiled, the loop copies its four maxima between registers at every pixel.
      int32_t v, ge;
      asm volatile(
          "1:\n\t"
          "ldr %[v], [%[px]]\n\t"
          "ssub8 %[ge], %[v], %[m0]\n\t"
          "sel %[m0], %[v], %[m0]\n\t"
          "ldr %[v], [%[px], #4]\n\t"
          "ssub8 %[ge], %[v], %[m1]\n\t"
          "sel %[m1], %[v], %[m1]\n\t"
          "ldr %[v], [%[px], #8]\n\t"
          "ssub8 %[ge], %[v], %[m2]\n\t"
          "sel %[m2], %[v], %[m2]\n\t"
          "ldr %[v], [%[px], #12]\n\t"
          "ssub8 %[ge], %[v], %[m3]\n\t"
          "sel %[m3], %[v], %[m3]\n\t"
          "add %[px], %[px], %[step]\n\t"
          "cmp %[px], %[end]\n\t"
          "bne 1b"
          : [m0] "+r"(m[0]), [m1] "+r"(m[1]), [m2] "+r"(m[2]), [m3] "+r"(m[3]), [px] "+r"(px), [v] "=&r"(v),
            [ge] "=&r"(ge)
          : [step] "r"(p.c), [end] "r"(end)
          : "cc", "memory");
      continue;
    }
    do {
      for (int32_t w = 0; w < kWords; ++w) m[w] = max_bytes(dsp::read_word(px + 4 * w), m[w]);
      px += p.c;
    } while (px != end);
  }
  for (int32_t w = 0; w < kWords; ++w) {
    const int32_t v = min_bytes(m[w], hi);
    std::memcpy(out + c + 4 * w, &v, 4);
  }
}

}  // namespace

void maxpool_s8_dsp(const PoolParams& params, const int8_t* input, int8_t* output) {
  const PoolParams p = params;  // a copy: the output stores could alias the fields otherwise
  const int32_t lo = int32_t(uint32_t(uint8_t(p.act_min)) * 0x01010101u);
  const int32_t hi = int32_t(uint32_t(uint8_t(p.act_max)) * 0x01010101u);
  for_each_pool_pixel(p, input, output, [&](const PoolWindow& window, int8_t* out) {
    int32_t c = 0;
    for (; c + 4 * kWordsPerPass <= p.c; c += 4 * kWordsPerPass) max_channels<kWordsPerPass>(p, window, c, lo, hi, out);
    for (; c + 4 <= p.c; c += 4) max_channels<1>(p, window, c, lo, hi, out);
    for (; c < p.c; ++c) {  // the last 1-3 channels, one by one
      int32_t m = p.act_min;
      for (int32_t r = 0; r < window.rows; ++r) {
        for (int32_t i = 0; i < window.cols; ++i) {
          const int32_t v = window.first[r * window.row_step + i * p.c + c];
          m = v > m ? v : m;
        }
      }
      out[c] = int8_t(m < p.act_max ? m : p.act_max);
    }
  });
}

}  // namespace mcuflow::kernels
