// Check of the DSP fully connected kernel (checks.h): the reference's check, then the kernel's
// contract (kernels_dsp.h).
#include "check_helpers.h"

namespace mcuflow::ops {
namespace {

template <Error (*kReference)(const OpCheck&), kernels::Refusal (*kRefusal)(const kernels::FcParams&),
          int32_t (*kScratchBytes)(const kernels::FcParams&)>
Error check_dsp_fc(const OpCheck& c) {
  if (const Error e = kReference(c); e != Error::kOk) return e;
  const auto& p = c.get_params<kernels::FcParams>();
  return ok_if(kRefusal(p) == kernels::Refusal::kNone && weighted_inputs_constant(c) &&
               dsp::scratch_fits(c, kernels::kDspFcScratchSlot, uint64_t(kScratchBytes(p))));
}

}  // namespace

Error check_fc_s8_dsp(const OpCheck& c) {
  return check_dsp_fc<check_fc_s8, kernels::fc_s8_dsp_refusal, kernels::dsp_fc_scratch_bytes>(c);
}
// Packed int4 weights: unpacked into the front of the scratch (kernels_dsp.h).
Error check_fc_s8_w4_dsp(const OpCheck& c) {
  return check_dsp_fc<check_fc_s8_w4, kernels::fc_s8_w4_dsp_refusal, kernels::dsp_fc_w4_scratch_bytes>(c);
}

}  // namespace mcuflow::ops
