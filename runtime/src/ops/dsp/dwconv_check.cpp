// Checks of the DSP depthwise convs (checks.h).
#include "check_helpers.h"

namespace mcuflow::ops {

using kernels::DwConvParams;

Error check_dwconv_s8_dsp(const OpCheck& c) {
  if (const Error e = check_dwconv_s8(c); e != Error::kOk) return e;
  const auto& p = c.get_params<DwConvParams>();
  return ok_if(p.ch_mult == 1 && int64_t(p.k_h) * p.k_w <= kernels::kDspMaxTaps && dsp::constant_inputs(c) &&
               dsp::prepared_matches(c, dsp::kPreparedSlot, kernels::dsp_dw_prepared_words(p), [&](int32_t i) {
                 return kernels::dsp_dw_prepared_word(p, dsp::weights(c), i);
               }));
}

Error check_dwconv_s8_3x3_dsp(const OpCheck& c) {
  if (const Error e = check_dwconv_s8(c); e != Error::kOk) return e;
  const auto& p = c.get_params<DwConvParams>();
  return ok_if(p.ch_mult == 1 && p.k_h == 3 && p.k_w == 3 && p.stride_w == 1 && p.dil_h == 1 && p.dil_w == 1 &&
               dsp::constant_inputs(c) &&
               dsp::prepared_matches(c, dsp::kPreparedSlot, p.out_c * kernels::kDspDw3WeightWords,
                                     [&](int32_t i) { return kernels::dsp_dw3_weight_word(p, dsp::weights(c), i); }) &&
               dsp::scratch_fits(c, dsp::kDw3ScratchSlot, uint64_t(kernels::dsp_dw3_scratch_bytes(p))));
}

}  // namespace mcuflow::ops
