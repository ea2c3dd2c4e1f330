// Sum, mean or max over the middle axis of [outer][reduce][inner], int8 (TFLite int8 mean /
// sum semantics): the offset inputs are summed (or their maximum taken) in int32 and
// requantized once; a mean's 1/reduce is part of the multiplier.
#include "mcuflow/kernels/arith.h"
#include "mcuflow/kernels/kernels.h"

namespace mcuflow::kernels {

void reduce_s8(const ReduceParams& p, const int8_t* input, int8_t* output) {
  for (int32_t o = 0; o < p.outer; ++o) {
    for (int32_t i = 0; i < p.inner; ++i) {
      const int8_t* in = input + o * p.reduce * p.inner + i;
      int32_t acc;
      if (p.op == kReduceMax) {
        int32_t m = in[0];
        for (int32_t r = 1; r < p.reduce; ++r) m = in[r * p.inner] > m ? in[r * p.inner] : m;
        acc = m + p.input_offset;
      } else {
        acc = 0;
        for (int32_t r = 0; r < p.reduce; ++r) acc += in[r * p.inner] + p.input_offset;
      }
      const int32_t out = multiply_by_quantized_multiplier(acc, p.multiplier, p.shift) + p.output_offset;
      output[o * p.inner + i] = static_cast<int8_t>(clamp_i32(out, p.act_min, p.act_max));
    }
  }
}

}  // namespace mcuflow::kernels
