// Shared parts of the element-wise binary kernels: the broadcast walk of BinaryParams and the
// int8 add/sub arithmetic (TFLite int8 add: both inputs moved to a common scale with
// left_shift bits of headroom, combined in int32, then rescaled to the output).
#pragma once
#include <cstdint>

#include "mcuflow/kernels/arith.h"
#include "mcuflow/kernels/params.h"

namespace mcuflow::kernels::detail {

// output[n] = f(input1[n], input2[n2]) with input2 broadcast by in2_mode (see BinaryParams;
// CompareParams walks the same way).
template <typename P, typename T, typename Out, typename F>
void binary_elementwise(const P& p, const T* input1, const T* input2, Out* output, F f) {
  for (int32_t o = 0; o < p.outer; ++o) {
    for (int32_t i = 0; i < p.inner; ++i) {
      const int32_t n = o * p.inner + i;
      const int32_t n2 = p.in2_mode == 0 ? n : (p.in2_mode == 1 ? i : 0);
      output[n] = f(input1[n], input2[n2]);
    }
  }
}

// T: int8_t (left_shift 20) or int16_t (left_shift 15: |x + offset| <= 2^15 keeps the shifted
// value within int32).
template <typename T>
T add_or_sub(const BinaryParams& p, T x1, T x2, bool subtract) {
  const int32_t a = wrapping_left_shift(x1 + p.input1_offset, p.left_shift);
  const int32_t b = wrapping_left_shift(x2 + p.input2_offset, p.left_shift);
  const int32_t scaled_a = multiply_by_quantized_multiplier(a, p.input1_multiplier, p.input1_shift);
  const int32_t scaled_b = multiply_by_quantized_multiplier(b, p.input2_multiplier, p.input2_shift);
  const int32_t combined = subtract ? scaled_a - scaled_b : scaled_a + scaled_b;
  const int32_t out = multiply_by_quantized_multiplier(combined, p.output_multiplier, p.output_shift) + p.output_offset;
  return static_cast<T>(clamp_i32(out, p.act_min, p.act_max));
}

// TFLite int8 and int16 mul: the product of the offset inputs (|product| <= 2^30) requantized
// once with in1_scale * in2_scale / out_scale.
template <typename T>
T multiply(const BinaryParams& p, T x1, T x2) {
  const int32_t product = (x1 + p.input1_offset) * (x2 + p.input2_offset);
  const int32_t out = multiply_by_quantized_multiplier(product, p.output_multiplier, p.output_shift) + p.output_offset;
  return static_cast<T>(clamp_i32(out, p.act_min, p.act_max));
}

// minimum_s8 / maximum_s8: each input requantized to the output's scale (a monotonic map, so
// the order of the values is kept), then the smaller or larger one.
inline int32_t rescaled_input(int32_t x, int32_t offset, int32_t multiplier, int32_t shift, int32_t output_offset) {
  return multiply_by_quantized_multiplier(x + offset, multiplier, shift) + output_offset;
}

template <bool kMaximum>
int8_t min_or_max_s8(const BinaryParams& p, int8_t x1, int8_t x2) {
  const int32_t a = rescaled_input(x1, p.input1_offset, p.input1_multiplier, p.input1_shift, p.output_offset);
  const int32_t b = rescaled_input(x2, p.input2_offset, p.input2_multiplier, p.input2_shift, p.output_offset);
  const int32_t v = kMaximum ? (a > b ? a : b) : (a < b ? a : b);
  return static_cast<int8_t>(clamp_i32(v, p.act_min, p.act_max));
}

// a <op> b for a CompareOp (an unknown op, which the verifier refuses, is false).
template <typename T>
bool compare(int32_t op, T a, T b) {
  switch (op) {
    case kCompareEq: return a == b;
    case kCompareNe: return a != b;
    case kCompareLt: return a < b;
    case kCompareLe: return a <= b;
    case kCompareGt: return a > b;
    case kCompareGe: return a >= b;
    default: return false;
  }
}

inline float clamp_f32(float v, const BinaryParams& p) {
  v = v < p.act_min_f ? p.act_min_f : v;
  return v > p.act_max_f ? p.act_max_f : v;
}

}  // namespace mcuflow::kernels::detail
