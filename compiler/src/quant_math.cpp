// Host-side quantization math (see quant_math.h): real-valued scales -> the integer
// multipliers, shifts and limits the int8 kernels consume, computed as TFLite prepares them so
// that our integer results match TFLite's bit for bit.
#include "mcuflow/compiler/quant_math.h"

#include <algorithm>
#include <cmath>

namespace mcuflow::compiler {

QuantizedMultiplier quantize_multiplier(double real_multiplier) {
  if (real_multiplier == 0.0) return {0, 0};
  int exponent = 0;
  const double fraction = std::frexp(real_multiplier, &exponent);  // real = fraction * 2^exponent, |fraction| in [0.5, 1)
  int64_t q = static_cast<int64_t>(std::round(fraction * 2147483648.0));  // Q31, ties away from zero
  if (q == (int64_t{1} << 31)) {  // fraction rounded up to 1.0: renormalise to 0.5 * 2^(exponent+1)
    q /= 2;
    ++exponent;
  }
  if (exponent < -31) return {0, 0};  // below what a 31-bit right shift can express: flush to zero
  return {static_cast<int32_t>(q), exponent};
}

AddRescale add_rescale(double in1_scale, double in2_scale, double out_scale, int left_shift) {
  // Both inputs are brought to the common scale 2 * max(in_scale) (so each rescale
  // multiplier is <= 1/2), with left_shift bits of headroom; the sum is then rescaled from
  // that common scale / 2^left_shift to the output scale.
  const double twice_max_input_scale = 2.0 * std::max(in1_scale, in2_scale);
  AddRescale r;
  r.left_shift = left_shift;
  r.input1 = quantize_multiplier(in1_scale / twice_max_input_scale);
  r.input2 = quantize_multiplier(in2_scale / twice_max_input_scale);
  r.output = quantize_multiplier(twice_max_input_scale / (static_cast<double>(1 << left_shift) * out_scale));
  return r;
}

void set_add_rescale(kernels::BinaryParams& p, const AddRescale& r) {
  p.left_shift = r.left_shift;
  p.input1_multiplier = r.input1.multiplier;
  p.input1_shift = r.input1.shift;
  p.input2_multiplier = r.input2.multiplier;
  p.input2_shift = r.input2.shift;
  p.output_multiplier = r.output.multiplier;
  p.output_shift = r.output.shift;
}

void set_compare_rescale(kernels::CompareParams& p, float in1_scale, float in2_scale) {
  int e1 = 0, e2 = 0;
  // scale = fraction * 2^e, fraction in [0.5, 1): fraction * 2^24 is the float's integer significand.
  p.input1_multiplier = int32_t(std::ldexp(std::frexp(in1_scale, &e1), 24));
  p.input2_multiplier = int32_t(std::ldexp(std::frexp(in2_scale, &e2), 24));
  const int low = std::min(e1, e2);
  p.input1_shift = std::min(e1 - low, int(kernels::kCompareMaxShift));
  p.input2_shift = std::min(e2 - low, int(kernels::kCompareMaxShift));
}

QuantizedMultiplier mul_rescale(double in1_scale, double in2_scale, double out_scale) {
  return quantize_multiplier(in1_scale * in2_scale / out_scale);
}

SoftmaxRescale softmax_rescale(double input_scale, double beta) {
  // The kernel turns an input difference d (in input steps) into beta * input_scale * d in Q5
  // (5 integer bits, 26 fractional): a real multiplier beta * input_scale * 2^26, capped at
  // the largest Q31 value (any bigger factor already sends every non-maximal element to 0).
  constexpr int kScaledDiffIntegerBits = 5;
  const double real = std::min(beta * input_scale * static_cast<double>(int64_t{1} << (31 - kScaledDiffIntegerBits)),
                               2147483647.0);
  const QuantizedMultiplier q = quantize_multiplier(real);  // real > 1 in practice: shift >= 0
  SoftmaxRescale r;
  r.input_multiplier = q.multiplier;
  r.input_left_shift = q.shift;
  // Largest |d| whose shifted value d * 2^left_shift stays within 31 * 2^26 (the Q5 range
  // the exp accepts without overflow); smaller differences are treated as exp = 0.
  const double radius = static_cast<double>((1 << kScaledDiffIntegerBits) - 1) *
                        static_cast<double>(int64_t{1} << (31 - kScaledDiffIntegerBits)) /
                        static_cast<double>(int64_t{1} << q.shift);
  r.diff_min = -static_cast<int32_t>(std::floor(radius));
  return r;
}

}  // namespace mcuflow::compiler
