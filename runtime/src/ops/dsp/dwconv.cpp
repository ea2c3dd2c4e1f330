// Adapter for the DSP depthwise conv. Inputs: the reference's five (input, weights, bias,
// multipliers, shifts), then the prepared weights and padding and the channel table
// (kernels_dsp.h).
#include "dsp_check.h"

namespace mcuflow::ops {
namespace {

using kernels::DspChannel;
using kernels::DwConvParams;

constexpr uint32_t kPreparedSlot = 5, kTableSlot = 6;

bool prepared_input_matches(const OpCheck& c, const DwConvParams& p) {
  const int32_t words = kernels::dsp_dw_prepared_words(p);
  if (!dsp::constant_table(c, kPreparedSlot, uint64_t(words))) return false;
  const auto* weights = reinterpret_cast<const int8_t*>(c.constants + c.tensor(1).offset);
  const int32_t* prepared = dsp::constant_words(c, kPreparedSlot);
  for (int32_t i = 0; i < words; ++i) {
    if (prepared[i] != kernels::dsp_dw_prepared_word(p, weights, i)) return false;
  }
  return true;
}

Error check_dwconv_s8_dsp(const OpCheck& c) {
  if (const Error e = check_dwconv_s8(c); e != Error::kOk) return e;
  const auto& p = c.get_params<DwConvParams>();
  const int64_t taps = int64_t(p.k_h) * p.k_w;
  return ok_if(p.ch_mult == 1 && taps <= kernels::kDspMaxTaps && dsp::constant_inputs(c) &&
               prepared_input_matches(c, p) &&
               dsp::channel_table_matches(c, kTableSlot, p.out_c, true, p.output_offset, taps));
}

void eval_dwconv_s8_dsp(const OpCall& c) {
  kernels::dwconv_s8_dsp(c.get_params<DwConvParams>(), c.in<int8_t>(0), c.in<int32_t>(kPreparedSlot),
                         c.in<DspChannel>(kTableSlot), c.out<int8_t>(0));
}

}  // namespace

extern const KernelEntry kernel_entry_dwconv_s8_dsp = {sizeof(DwConvParams), 7, 1, check_dwconv_s8_dsp,
                                                       eval_dwconv_s8_dsp};

}  // namespace mcuflow::ops
