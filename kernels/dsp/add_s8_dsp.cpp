// Element-wise add, int8, DSP: each input's rescaling is a function of its byte alone, so the
// compiler tabulates it (add_table_entry: doubled and shifted as DspOutputStage wants it) and
// an element costs two table loads, an add and the output stage (SMMLAR, the sign step, a
// shift) instead of three requantizations; SSAT and a bytewise SSUB8/SEL clamp
// finish four outputs in one word.
#include "mcuflow/kernels/elementwise_tiers.h"
#include "dsp_blocks.h"

namespace mcuflow::kernels {
namespace {

struct Add {
  DspOutputStage stage;
  const int32_t* table1;
  const int32_t* table2;
  int32_t act_min, act_max;

  template <bool kFolded>
  int32_t value(int32_t v) const {  // before the activation clamp
    return kFolded ? stage.folded_output(v) : stage(v);
  }
};

// out[i] = a[i] + b[i * b_step] for i < n.
template <bool kFolded>
void add_run(const Add& params, const int8_t* a, const int8_t* b, int32_t b_step, int8_t* out, int32_t n) {
  const Add add = params;  // a local copy: the output stores cannot alias it, so it stays in registers
  const int32_t fixed = add.table2[uint8_t(*b)];  // b_step 0
  auto second = [&](uint32_t word, int32_t byte) { return b_step ? add.table2[(word >> (8 * byte)) & 0xFFu] : fixed; };
  int32_t i = 0;
#if defined(__ARM_FEATURE_DSP)
  const uint32_t act_min = dsp::byte_splat(add.act_min), act_max = dsp::byte_splat(add.act_max);
  for (; i + 4 <= n; i += 4) {
    const uint32_t wa = uint32_t(dsp::read_word(a + i)), wb = b_step ? uint32_t(dsp::read_word(b + i)) : 0u;
    int32_t v[4];
    for (int32_t k = 0; k < 4; ++k) v[k] = add.value<kFolded>(add.table1[(wa >> (8 * k)) & 0xFFu] + second(wb, k));
    dsp::write_word(out + i, dsp::clamp_bytes(dsp::saturate_pack(v[0], v[1], v[2], v[3]), act_min, act_max));
  }
#endif
  for (; i < n; ++i) {
    const int32_t v = add.table1[uint8_t(a[i])] + (b_step ? add.table2[uint8_t(b[i])] : fixed);
    out[i] = int8_t(clamp_i32(add.value<kFolded>(v), add.act_min, add.act_max));
  }
}

}  // namespace

void add_s8_dsp(const BinaryParams& p, const int8_t* input1, const int8_t* input2, const int32_t* tables,
                int8_t* output) {
  const Add add{DspOutputStage(p.output_multiplier, p.output_shift, p.output_offset), tables, tables + kByteValues,
                p.act_min, p.act_max};
  if (add.stage.folded) {
    binary_runs(p, input1, input2, output, [&add](const int8_t* a, const int8_t* b, int32_t b_step, int8_t* out,
                                                  int32_t n) { add_run<true>(add, a, b, b_step, out, n); });
  } else {
    binary_runs(p, input1, input2, output, [&add](const int8_t* a, const int8_t* b, int32_t b_step, int8_t* out,
                                                  int32_t n) { add_run<false>(add, a, b, b_step, out, n); });
  }
}

}  // namespace mcuflow::kernels
