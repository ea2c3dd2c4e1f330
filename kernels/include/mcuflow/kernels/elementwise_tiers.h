// Shared pieces of the DSP and MVE element-wise kernels: the broadcast walk, what the compiler
// precomputes for them (add and requantize tables) and the parameter ranges on which their
// shortcuts equal the reference arithmetic. The compiler builds the tables with these functions
// and the load-time checks (runtime/src/ops/{dsp,mve}/) recompute them, so a board runs only
// tables that equal the reference's values.
#pragma once
#include <cstdint>
#include <cstring>

#include "mcuflow/kernels/arith.h"
#include "mcuflow/kernels/params.h"

namespace mcuflow::kernels {

// BinaryParams' broadcast walk as runs of contiguous outputs: run(a, b, b_step, out, n) computes
// out[k] = f(a[k], b[k * b_step]) for k < n. in2_mode 1: one run per row of `inner` (input 2
// repeats every row); 0: one run over all (b_step 1); 2: input 2 a scalar (b_step 0).
template <typename Run>
void binary_runs(const BinaryParams& p, const int8_t* input1, const int8_t* input2, int8_t* output, Run run) {
  if (p.in2_mode == 1) {
    for (int32_t o = 0; o < p.outer; ++o) run(input1 + o * p.inner, input2, 1, output + o * p.inner, p.inner);
  } else {
    run(input1, input2, p.in2_mode == 0 ? 1 : 0, output, p.outer * p.inner);
  }
}

constexpr int32_t kByteValues = 256;  // entries of a table indexed by an int8 input's byte
// The tier kernels' tables follow their reference's inputs: an add's after its two inputs, a
// requantization's after its one.
constexpr uint8_t kAddTablesSlot = 2, kRequantizeTableSlot = 1;

// requantize_s8 is a function of one int8: entry b is its output for the input int8_t(b).
inline int8_t requantize_table_entry(const RequantizeParams& p, int32_t byte) {
  const int32_t v =
      multiply_by_quantized_multiplier(int8_t(byte) + p.input_offset, p.multiplier, p.shift) + p.output_offset;
  return int8_t(clamp_i32(v, p.act_min, p.act_max));
}

// A cat slice that requantizes (concat_slice_s8, requantize 1) computes requantize_s8's output
// over the whole int8 range: its tier kernels' table holds entry b of that, as requantize's does.
inline int8_t concat_requantize_table_entry(const ConcatSliceParams& p, int32_t byte) {
  return requantize_table_entry(
      RequantizeParams{0, p.input_offset, p.output_offset, p.multiplier, p.shift, -128, 127}, byte);
}

// ConcatSliceParams' walk as runs: run(in, out, n) for each outer row; one run over everything
// when the slice is the whole output (in_c == out_c), whose rows follow each other.
template <typename Run>
void concat_runs(const ConcatSliceParams& p, const int8_t* input, int8_t* output, Run run) {
  if (p.in_c == p.out_c) return run(input, output, p.outer * p.in_c);
  for (int32_t o = 0; o < p.outer; ++o) run(input + o * p.in_c, output + o * p.out_c + p.offset_c, p.in_c);
}

// The output stage of add_s8 / mul_s8 on a doubled, already left-shifted value
// v = 2 * (x << max(output_shift, 0)):
//   multiply_by_quantized_multiplier(x, m, shift) = rounding_divide_by_pot(SMMULR(v, m), e),
// e = max(-shift, 0). SMMULR(v, m) = floor((v * m + 2^31) / 2^32) is the doubling high multiply
// of x exactly (no saturation: m >= 0). The quotient rounded half away from zero is
// (y + 2^(e-1) - [y < 0]) >> e, and [y < 0] may be taken as [v < 0] since they differ only where
// y = 0, which gives 0 either way. It holds when |v| <= INT32_MAX (then |y| <= 2^30).
inline int64_t wide_abs(int64_t v) { return v < 0 ? -v : v; }
inline bool doubled_fits(int64_t magnitude, int32_t output_shift) {
  return magnitude * (int64_t{2} << (output_shift > 0 ? output_shift : 0)) <= kInt32Max;
}

// add_s8: entry b of table t (t = 0: input 1, 1: input 2) is the reference's rescaled input for
// int8_t(b), doubled and shifted left by max(output_shift, 0) as the output stage wants it; the
// kernel sums one entry of each. Exact while every sum of two entries stays within int32
// (add_tables_fit), which keeps the reference's sum and its left shift from wrapping too.
inline int64_t add_rescaled_input(const BinaryParams& p, int32_t input, int32_t byte) {
  const int32_t offset = input == 0 ? p.input1_offset : p.input2_offset;
  const int32_t multiplier = input == 0 ? p.input1_multiplier : p.input2_multiplier;
  const int32_t shift = input == 0 ? p.input1_shift : p.input2_shift;
  return multiply_by_quantized_multiplier(wrapping_left_shift(int8_t(byte) + offset, p.left_shift), multiplier, shift);
}
inline int32_t add_table_value(const BinaryParams& p, int64_t rescaled) {
  return int32_t(rescaled * (int64_t{2} << (p.output_shift > 0 ? p.output_shift : 0)));
}
inline int32_t add_table_entry(const BinaryParams& p, int32_t input, int32_t byte) {
  return add_table_value(p, add_rescaled_input(p, input, byte));
}
// visit(input, byte, rescaled) sees every rescaled input once (false: stop, not fit), so that a
// check comparing the tables computes each only once (64-bit arithmetic: dear on a Cortex-M).
template <typename Visit>
bool add_tables_fit(const BinaryParams& p, Visit visit) {
  int64_t largest[2] = {0, 0};
  for (int32_t input = 0; input < 2; ++input) {
    for (int32_t b = 0; b < kByteValues; ++b) {
      const int64_t rescaled = add_rescaled_input(p, input, b), v = wide_abs(rescaled);
      if (!visit(input, b, rescaled)) return false;
      largest[input] = v > largest[input] ? v : largest[input];
    }
  }
  return doubled_fits(largest[0] + largest[1], p.output_shift);
}
inline bool add_tables_fit(const BinaryParams& p) {
  return add_tables_fit(p, [](int32_t, int32_t, int64_t) { return true; });
}

// mul_s8: the product of the offset inputs, doubled and shifted left, stays within int32.
inline int64_t largest_offset_input(int32_t offset) {
  const int64_t low = wide_abs(int64_t{-128} + offset), high = wide_abs(int64_t{127} + offset);
  return low > high ? low : high;
}
inline bool mul_product_fits(const BinaryParams& p) {
  return doubled_fits(largest_offset_input(p.input1_offset) * largest_offset_input(p.input2_offset), p.output_shift);
}

// dequantize_s8_f32 is a function of one int8 too: the scalar and DSP kernels look its float up.
// Entry b holds the bits of the reference's result for the input int8_t(b) (compared as bits
// at load: a table holding -0 for +0 would pass a float comparison).
constexpr uint8_t kDequantizeTableSlot = 1;
inline uint32_t dequantize_table_entry(const QuantizeParams& p, int32_t byte) {
  const float v = p.scale * static_cast<float>(int8_t(byte) - p.zero_point);
  uint32_t bits;
  std::memcpy(&bits, &v, sizeof bits);
  return bits;
}

}  // namespace mcuflow::kernels
