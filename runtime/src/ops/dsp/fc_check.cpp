// Check of the DSP fully connected kernel (checks.h).
#include "check_helpers.h"

namespace mcuflow::ops {

Error check_fc_s8_dsp(const OpCheck& c) {
  if (const Error e = check_fc_s8(c); e != Error::kOk) return e;
  const auto& p = c.get_params<kernels::FcParams>();
  return ok_if(p.in_c >= 4 && p.in_c <= kernels::kDspMaxDepth && dsp::constant_inputs(c) &&
               dsp::scratch_fits(c, dsp::kScratchSlot, uint64_t(kernels::dsp_fc_scratch_bytes(p))));
}

}  // namespace mcuflow::ops
