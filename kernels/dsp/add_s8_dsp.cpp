// Element-wise add, int8, DSP: each input's rescaling is a function of its byte alone, so the
// compiler tabulates it (add_table_entry: doubled and shifted as DspOutputStage wants it) and
// an element costs two table loads, an add and the output stage (SMMLAR, the sign step, a
// shift) instead of three requantizations.
#include "mcuflow/kernels/elementwise_tiers.h"
#include "mcuflow/kernels/kernels_dsp.h"

namespace mcuflow::kernels {
namespace {

struct Add {
  DspOutputStage stage;
  const int32_t* table1;
  const int32_t* table2;
  int32_t act_min, act_max;

  template <bool kFolded>
  int8_t output(int32_t v) const {
    return int8_t(clamp_i32(kFolded ? stage.folded_output(v) : stage(v), act_min, act_max));
  }
};

// out[i] = a[i] + b[i * b_step] for i < n.
template <bool kFolded>
void add_run(const Add& add, const int8_t* a, const int8_t* b, int32_t b_step, int8_t* out, int32_t n) {
  if (b_step == 0) {
    const int32_t fixed = add.table2[uint8_t(*b)];
    for (int32_t i = 0; i < n; ++i) out[i] = add.output<kFolded>(add.table1[uint8_t(a[i])] + fixed);
  } else {
    for (int32_t i = 0; i < n; ++i) out[i] = add.output<kFolded>(add.table1[uint8_t(a[i])] + add.table2[uint8_t(b[i])]);
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
