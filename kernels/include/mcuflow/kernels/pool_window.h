// How the optimized pooling kernels (scalar, DSP, MVE tiers) walk an output pixel's window: the
// part of it inside the input (padding never contributes, as in the reference), as rows of
// pixels, full-width rows merged into one run (they are contiguous in NHWC memory), and split
// into blocks of at most a given number of pixels for kernels that sum into 16-bit lanes.
#pragma once
#include <cstdint>
#include "mcuflow/kernels/params.h"

namespace mcuflow::kernels {

// Sums of at most this many int8 values fit an int16 lane ([-32768, 32512]); sums of as many
// values biased to [0, 255] fit a uint16 lane when one more is allowed (255 * 257 = 65535).
constexpr int32_t kPoolLanePixels = 256;

struct PoolWindow {
  const int8_t* first;  // channel 0 of the window's first pixel inside the input
  int32_t rows, cols;   // pixels inside the input (rows x cols >= 1: verified)
  int32_t row_step;     // bytes from one row's first pixel to the next's
  int32_t count;        // rows * cols: the reference's divisor

  // f(first pixel, rows, cols) over blocks of at most max_pixels pixels covering the window.
  template <typename F>
  void for_each_block(int32_t max_pixels, int32_t channels, F f) const {
    const int32_t block_cols = cols < max_pixels ? cols : max_pixels, block_rows = max_pixels / block_cols;
    for (int32_t r = 0; r < rows; r += block_rows) {
      for (int32_t c = 0; c < cols; c += block_cols) {
        f(first + r * row_step + c * channels, rows - r < block_rows ? rows - r : block_rows,
          cols - c < block_cols ? cols - c : block_cols);
      }
    }
  }
};

inline PoolWindow pool_window(const PoolParams& p, const int8_t* input, int32_t oy, int32_t ox) {
  const int32_t iy0 = oy * p.stride_h - p.pad_top, ix0 = ox * p.stride_w - p.pad_left;
  const int32_t y0 = iy0 < 0 ? 0 : iy0, y1 = iy0 + p.k_h < p.in_h ? iy0 + p.k_h : p.in_h;
  const int32_t x0 = ix0 < 0 ? 0 : ix0, x1 = ix0 + p.k_w < p.in_w ? ix0 + p.k_w : p.in_w;
  PoolWindow w{input + (y0 * p.in_w + x0) * p.c, y1 - y0, x1 - x0, p.in_w * p.c, (y1 - y0) * (x1 - x0)};
  if (w.cols == p.in_w) {  // full rows follow each other in memory: one run
    w.cols = w.count;
    w.rows = 1;
  }
  return w;
}

// f(window, out) for every output pixel in raster order (the order the in-place planner relies
// on), out pointing at the pixel's p.c output channels.
template <typename F>
void for_each_pool_pixel(const PoolParams& p, const int8_t* input, int8_t* output, F f) {
  for (int32_t oy = 0; oy < p.out_h; ++oy) {
    for (int32_t ox = 0; ox < p.out_w; ++ox, output += p.c) f(pool_window(p, input, oy, ox), output);
  }
}

// The reference's average of a window sum: rounded half away from zero, then clamped.
inline int8_t pool_average(int32_t sum, int32_t count, int32_t act_min, int32_t act_max) {
  int32_t avg = sum > 0 ? (sum + count / 2) / count : (sum - count / 2) / count;
  avg = avg < act_min ? act_min : avg;
  return static_cast<int8_t>(avg > act_max ? act_max : avg);
}

}  // namespace mcuflow::kernels
