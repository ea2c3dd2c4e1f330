// Adapters for the DSP depthwise convs. Inputs: the reference's five (input, weights, bias,
// multipliers, shifts), then (kernels_dsp.h) for dwconv_s8_dsp the prepared weights and
// padding and the channel table; for dwconv_s8_3x3_dsp the prepared table and weights and the
// transposed rows' scratch.
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

Error check_dwconv_s8_3x3_dsp(const OpCheck& c) {
  if (const Error e = check_dwconv_s8(c); e != Error::kOk) return e;
  const auto& p = c.get_params<DwConvParams>();
  constexpr uint32_t kScratchSlot = 6;
  if (!(p.ch_mult == 1 && p.k_h == 3 && p.k_w == 3 && p.stride_w == 1 && p.dil_h == 1 && p.dil_w == 1 &&
        dsp::constant_inputs(c) && dsp::constant_table(c, kPreparedSlot, uint64_t(kernels::dsp_dw3_prepared_words(p))) &&
        dsp::scratch_fits(c, kScratchSlot, uint64_t(kernels::dsp_dw3_scratch_bytes(p)))))
    return Error::kBadParams;
  const int32_t* prepared = dsp::constant_words(c, kPreparedSlot);
  if (!dsp::channel_table_matches(c, reinterpret_cast<const DspChannel*>(prepared), p.out_c, true, p.output_offset, 9))
    return Error::kBadParams;
  const auto* weights = reinterpret_cast<const int8_t*>(c.constants + c.tensor(1).offset);
  const int32_t* widened = prepared + p.out_c * int32_t(sizeof(DspChannel) / 4);
  for (int32_t i = 0; i < p.out_c * kernels::kDspDw3WeightWords; ++i) {
    if (widened[i] != kernels::dsp_dw3_weight_word(p, weights, i)) return Error::kBadParams;
  }
  return Error::kOk;
}

void eval_dwconv_s8_dsp(const OpCall& c) {
  kernels::dwconv_s8_dsp(c.get_params<DwConvParams>(), c.in<int8_t>(0), c.in<int32_t>(kPreparedSlot),
                         c.in<DspChannel>(kTableSlot), c.out<int8_t>(0));
}

void eval_dwconv_s8_3x3_dsp(const OpCall& c) {
  kernels::dwconv_s8_3x3_dsp(c.get_params<DwConvParams>(), c.in<int8_t>(0), c.in<int32_t>(kPreparedSlot),
                             reinterpret_cast<int16_t*>(c.data[6]), c.out<int8_t>(0));
}

}  // namespace

extern const KernelEntry kernel_entry_dwconv_s8_3x3_dsp = {sizeof(DwConvParams), 7, 1, check_dwconv_s8_3x3_dsp,
                                                           eval_dwconv_s8_3x3_dsp};
extern const KernelEntry kernel_entry_dwconv_s8_dsp = {sizeof(DwConvParams), 7, 1, check_dwconv_s8_dsp,
                                                       eval_dwconv_s8_dsp};

}  // namespace mcuflow::ops
