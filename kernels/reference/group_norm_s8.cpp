// Group normalization, int8 in and out, integer arithmetic only (GroupNormParams in params.h
// states the formulas; arith.h inverse_sqrt the reciprocal square root). Every intermediate
// has a proven range (count <= 65536, |q| <= 128): |sum| < 2^23, sum_sq <= 2^30, v < 2^60,
// |count * q - sum| < 2^24, its product with the inverse < 2^55, so nothing wraps and every
// platform computes the same bits.
#include "mcuflow/kernels/arith.h"
#include "mcuflow/kernels/kernels.h"

namespace mcuflow::kernels {

void group_norm_s8(const GroupNormParams& p, const int8_t* input, const int8_t* weights, const int32_t* bias,
                   const int32_t* multipliers, const int32_t* shifts, int8_t* output) {
  const int32_t channels = p.groups * p.group_size;
  const int32_t count = p.spatial * p.group_size;
  const int64_t eps = static_cast<int64_t>((static_cast<uint64_t>(static_cast<uint32_t>(p.eps_hi)) << 32) |
                                           static_cast<uint32_t>(p.eps_lo));
  for (int32_t o = 0; o < p.outer; ++o) {
    const int8_t* in = input + o * p.spatial * channels;
    int8_t* out = output + o * p.spatial * channels;
    for (int32_t first = 0; first < channels; first += p.group_size) {
      int32_t sum = 0, sum_sq = 0;
      for (int32_t s = 0; s < p.spatial; ++s)
        for (int32_t j = 0; j < p.group_size; ++j) {
          const int32_t q = in[s * channels + first + j];
          sum += q;
          sum_sq += q * q;
        }
      const int64_t v = (int64_t{count} * sum_sq - int64_t{sum} * sum) * (int64_t{1} << kGroupNormVarianceBits) + eps;
      const InverseSqrt r =
          inverse_sqrt(static_cast<uint64_t>(v), kGroupNormFractionBits + kGroupNormVarianceBits / 2);
      for (int32_t s = 0; s < p.spatial; ++s)
        for (int32_t j = 0; j < p.group_size; ++j) {
          const int32_t c = first + j, i = s * channels + c;
          const int32_t centered = count * in[i] - sum;
          const int32_t normalized = static_cast<int32_t>(rounding_shift_right_i64(centered * r.value, r.shift));
          const int32_t acc = normalized * weights[c] + bias[c];
          const int32_t y = multiply_by_quantized_multiplier(acc, multipliers[c], shifts[c]) + p.output_offset;
          out[i] = static_cast<int8_t>(clamp_i32(y, p.act_min, p.act_max));
        }
    }
  }
}

}  // namespace mcuflow::kernels
