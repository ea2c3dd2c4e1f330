// Element-wise multiply, int8, DSP: four elements per step. SXTAB16 adds the offsets to two
// bytes of each input word at once, SMULBB/SMULTT form the exact products (|x + offset| <= 255
// fits a halfword), and DspOutputStage requantizes each product doubled and shifted left, which
// mul_product_fits keeps within int32 (elementwise_tiers.h); SSAT and a bytewise
// SSUB8/SEL clamp finish four outputs in one word.
#include "mcuflow/kernels/elementwise_tiers.h"
#include "dsp_blocks.h"

namespace mcuflow::kernels {
namespace {

struct Mul {
  DspOutputStage stage;
  int32_t pre_shift;  // 1 + max(output_shift, 0): the doubling and the reference's left shift
  int32_t input1_offset, input2_offset, input1_pair, input2_pair;
  int32_t act_min, act_max;

  explicit Mul(const BinaryParams& p)
      : stage(p.output_multiplier, p.output_shift, p.output_offset),
        pre_shift(1 + (p.output_shift > 0 ? p.output_shift : 0)),
        input1_offset(p.input1_offset),
        input2_offset(p.input2_offset),
        input1_pair(int32_t((uint32_t(p.input1_offset) & 0xFFFFu) * 0x10001u)),
        input2_pair(int32_t((uint32_t(p.input2_offset) & 0xFFFFu) * 0x10001u)),
        act_min(p.act_min),
        act_max(p.act_max) {}

  template <bool kFolded>
  int32_t value(int32_t product) const {  // before the activation clamp
    const int32_t v = int32_t(uint32_t(product) << pre_shift);
    return kFolded ? stage.folded_output(v) : stage(v);
  }
  template <bool kFolded>
  int8_t output(int32_t product) const {
    return int8_t(clamp_i32(value<kFolded>(product), act_min, act_max));
  }
};

// The products of the halfwords' bottoms and tops: GCC makes them SMULBB and SMULTT.
inline int32_t bottoms(int32_t a, int32_t b) { return int32_t(int16_t(a)) * int16_t(b); }
inline int32_t tops(int32_t a, int32_t b) { return (a >> 16) * (b >> 16); }

// out[i] = a[i] * b[i * b_step] for i < n.
template <bool kFolded>
void mul_run(const Mul& params, const int8_t* a, const int8_t* b, int32_t b_step, int8_t* out, int32_t n) {
  const Mul mul = params;  // a local copy: the output stores cannot alias it, so it stays in registers
  int32_t i = 0;
#if defined(__ARM_FEATURE_DSP)
  // b_step 0: the scalar's offset pair, as SXTAB16 would make it.
  const int32_t b_fixed = int32_t((uint32_t(*b + mul.input2_offset) & 0xFFFFu) * 0x10001u);
  const uint32_t act_min = dsp::byte_splat(mul.act_min), act_max = dsp::byte_splat(mul.act_max);
  for (; i + 4 <= n; i += 4) {
    const int32_t wa = dsp::read_word(a + i);
    const int32_t a02 = __sxtab16(mul.input1_pair, wa), a13 = dsp::sxtab16_odd(mul.input1_pair, wa);
    int32_t b02 = b_fixed, b13 = b_fixed;
    if (b_step) {
      const int32_t wb = dsp::read_word(b + i);
      b02 = __sxtab16(mul.input2_pair, wb), b13 = dsp::sxtab16_odd(mul.input2_pair, wb);
    }
    const uint32_t bytes =
        dsp::saturate_pack(mul.value<kFolded>(bottoms(a02, b02)), mul.value<kFolded>(bottoms(a13, b13)),
                           mul.value<kFolded>(tops(a02, b02)), mul.value<kFolded>(tops(a13, b13)));
    dsp::write_word(out + i, dsp::clamp_bytes(bytes, act_min, act_max));
  }
#endif
  for (; i < n; ++i) out[i] = mul.output<kFolded>((a[i] + mul.input1_offset) * (b[i * b_step] + mul.input2_offset));
}

}  // namespace

void mul_s8_dsp(const BinaryParams& p, const int8_t* input1, const int8_t* input2, int8_t* output) {
  const Mul mul(p);
  if (mul.stage.folded) {
    binary_runs(p, input1, input2, output, [&mul](const int8_t* a, const int8_t* b, int32_t b_step, int8_t* out,
                                                  int32_t n) { mul_run<true>(mul, a, b, b_step, out, n); });
  } else {
    binary_runs(p, input1, input2, output, [&mul](const int8_t* a, const int8_t* b, int32_t b_step, int8_t* out,
                                                  int32_t n) { mul_run<false>(mul, a, b, b_step, out, n); });
  }
}

}  // namespace mcuflow::kernels
