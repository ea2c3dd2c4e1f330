// Adapters for the DSP depthwise convs. Inputs: the reference's five (input, weights, bias,
// multipliers, shifts), then the prepared (widened) weights (kernels_dsp.h), and for
// dwconv_s8_3x3_dsp the scratch of transposed rows.
#include "dsp_check.h"

namespace mcuflow::ops {
namespace {

using kernels::DwConvParams;

constexpr uint32_t kPreparedSlot = 5, kScratchSlot = 6;

Error check_dwconv_s8_dsp(const OpCheck& c) {
  if (const Error e = check_dwconv_s8(c); e != Error::kOk) return e;
  const auto& p = c.get_params<DwConvParams>();
  return ok_if(p.ch_mult == 1 && int64_t(p.k_h) * p.k_w <= kernels::kDspMaxTaps && dsp::constant_inputs(c) &&
               dsp::prepared_matches(c, kPreparedSlot, kernels::dsp_dw_prepared_words(p), [&](int32_t i) {
                 return kernels::dsp_dw_prepared_word(p, dsp::weights(c), i);
               }));
}

Error check_dwconv_s8_3x3_dsp(const OpCheck& c) {
  if (const Error e = check_dwconv_s8(c); e != Error::kOk) return e;
  const auto& p = c.get_params<DwConvParams>();
  return ok_if(p.ch_mult == 1 && p.k_h == 3 && p.k_w == 3 && p.stride_w == 1 && p.dil_h == 1 && p.dil_w == 1 &&
               dsp::constant_inputs(c) &&
               dsp::prepared_matches(c, kPreparedSlot, p.out_c * kernels::kDspDw3WeightWords,
                                     [&](int32_t i) { return kernels::dsp_dw3_weight_word(p, dsp::weights(c), i); }) &&
               dsp::scratch_fits(c, kScratchSlot, uint64_t(kernels::dsp_dw3_scratch_bytes(p))));
}

void eval_dwconv_s8_dsp(const OpCall& c) {
  kernels::dwconv_s8_dsp(c.get_params<DwConvParams>(), c.in<int8_t>(0), c.in<int32_t>(kPreparedSlot),
                         c.in<int32_t>(2), c.in<int32_t>(3), c.in<int32_t>(4), c.out<int8_t>(0));
}

void eval_dwconv_s8_3x3_dsp(const OpCall& c) {
  kernels::dwconv_s8_3x3_dsp(c.get_params<DwConvParams>(), c.in<int8_t>(0), c.in<int32_t>(kPreparedSlot),
                             c.in<int32_t>(2), c.in<int32_t>(3), c.in<int32_t>(4),
                             reinterpret_cast<int16_t*>(c.data[kScratchSlot]), c.out<int8_t>(0));
}

}  // namespace

extern const KernelEntry kernel_entry_dwconv_s8_dsp = {sizeof(DwConvParams), 6, 1, check_dwconv_s8_dsp,
                                                       eval_dwconv_s8_dsp};
extern const KernelEntry kernel_entry_dwconv_s8_3x3_dsp = {sizeof(DwConvParams), 7, 1, check_dwconv_s8_3x3_dsp,
                                                           eval_dwconv_s8_3x3_dsp};

}  // namespace mcuflow::ops
