// Checks of the DSP depthwise convs (checks.h): the reference's check, then the kernel's contract
// (kernels_dsp.h): its refusal of the params, constant weights and tables, the prepared input
// equal to its recomputation from the weights, and for the 3x3 kernel its scratch.
#include "check_helpers.h"

namespace mcuflow::ops {

using kernels::DwConvParams;

Error check_dwconv_s8_dsp(const OpCheck& c) {
  if (const Error e = check_dwconv_s8(c); e != Error::kOk) return e;
  const auto& p = c.get_params<DwConvParams>();
  return ok_if(kernels::dwconv_s8_dsp_refusal(p) == kernels::Refusal::kNone && weighted_inputs_constant(c) &&
               dsp::prepared_matches(c, kernels::kDspDwPreparedSlot, kernels::dsp_dw_prepared_words(p),
                                     [&](int32_t i) { return kernels::dsp_dw_prepared_word(p, dsp::weights(c), i); }));
}

// The int4-weight kernel builds its prepared input in the scratch: nothing to verify but its size.
Error check_dwconv_s8_w4_dsp(const OpCheck& c) {
  if (const Error e = check_dwconv_s8_w4(c); e != Error::kOk) return e;
  const auto& p = c.get_params<DwConvParams>();
  return ok_if(kernels::dwconv_s8_w4_dsp_refusal(p) == kernels::Refusal::kNone &&
               dsp::scratch_fits(c, kernels::kDspW4ScratchSlot, uint64_t(kernels::dsp_dw_w4_scratch_bytes(p))));
}

Error check_dwconv_s8_3x3_dsp(const OpCheck& c) {
  if (const Error e = check_dwconv_s8(c); e != Error::kOk) return e;
  const auto& p = c.get_params<DwConvParams>();
  return ok_if(kernels::dwconv_s8_3x3_dsp_refusal(p) == kernels::Refusal::kNone && weighted_inputs_constant(c) &&
               dsp::walk_matches(c, kernels::kDspDwPreparedSlot, p.out_c * kernels::kDspDw3WeightWords,
                                 [&](auto same) { return kernels::dsp_dw3_walk_prepared(p, dsp::weights(c), same); }) &&
               dsp::scratch_fits(c, kernels::kDspDw3ScratchSlot, uint64_t(kernels::dsp_dw3_scratch_bytes(p))));
}

}  // namespace mcuflow::ops
