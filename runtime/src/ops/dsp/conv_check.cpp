// Checks of the DSP conv kernels (checks.h).
#include "check_helpers.h"

namespace mcuflow::ops {
namespace {

using kernels::ConvParams;

// The reference's checks, then the kernel's contract (kernels_dsp.h): its refusal of the params,
// constant weights and tables, and its scratch.
template <kernels::Refusal (*kRefusal)(const ConvParams&)>
Error check_dsp_conv(const OpCheck& c) {
  if (const Error e = check_conv_s8(c); e != Error::kOk) return e;
  const auto& p = c.get_params<ConvParams>();
  return ok_if(kRefusal(p) == kernels::Refusal::kNone && weighted_inputs_constant(c) &&
               dsp::scratch_fits(c, kernels::kDspConvScratchSlot, uint64_t(kernels::dsp_conv_scratch_bytes(p))));
}

}  // namespace

Error check_conv_s8_dsp(const OpCheck& c) { return check_dsp_conv<kernels::conv_s8_dsp_refusal>(c); }
Error check_conv_s8_1x1_dsp(const OpCheck& c) { return check_dsp_conv<kernels::conv_s8_1x1_dsp_refusal>(c); }

}  // namespace mcuflow::ops
