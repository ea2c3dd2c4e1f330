// Check of the DSP fully connected kernel (checks.h): the reference's check, then the kernel's
// contract (kernels_dsp.h).
#include "check_helpers.h"

namespace mcuflow::ops {

Error check_fc_s8_dsp(const OpCheck& c) {
  if (const Error e = check_fc_s8(c); e != Error::kOk) return e;
  const auto& p = c.get_params<kernels::FcParams>();
  return ok_if(kernels::fc_s8_dsp_refusal(p) == kernels::Refusal::kNone && weighted_inputs_constant(c) &&
               dsp::scratch_fits(c, kernels::kDspFcScratchSlot, uint64_t(kernels::dsp_fc_scratch_bytes(p))));
}

}  // namespace mcuflow::ops
