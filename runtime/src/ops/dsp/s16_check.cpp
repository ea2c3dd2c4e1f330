// Checks of the int16-activation DSP kernels (checks.h): the reference's check, then the
// kernel's contract (kernels_dsp.h): its refusal, constant weights and tables, its scratch.
#include "check_helpers.h"

namespace mcuflow::ops {

using kernels::ConvParams;
using kernels::Refusal;

namespace {

template <Refusal (*kRefusal)(const ConvParams&)>
Error check_dsp_conv_s16(const OpCheck& c) {
  if (const Error e = check_conv_s16(c); e != Error::kOk) return e;
  const auto& p = c.get_params<ConvParams>();
  return ok_if(kRefusal(p) == Refusal::kNone && weighted_inputs_constant(c) &&
               dsp::scratch_fits(c, kernels::kDspS16ScratchSlot, uint64_t(kernels::dsp_conv_scratch_bytes(p))));
}

}  // namespace

Error check_conv_s16_1x1_dsp(const OpCheck& c) { return check_dsp_conv_s16<kernels::conv_s16_1x1_dsp_refusal>(c); }
Error check_conv_s16_dsp(const OpCheck& c) { return check_dsp_conv_s16<kernels::conv_s16_dsp_refusal>(c); }
Error check_fc_s16_dsp(const OpCheck& c) {
  if (const Error e = check_fc_s16(c); e != Error::kOk) return e;
  const auto& p = c.get_params<kernels::FcParams>();
  return ok_if(kernels::fc_s16_dsp_refusal(p) == Refusal::kNone && weighted_inputs_constant(c) &&
               dsp::scratch_fits(c, kernels::kDspS16ScratchSlot, uint64_t(kernels::dsp_s16_fc_scratch_bytes(p))));
}
Error check_dwconv_s16_dsp(const OpCheck& c) {
  if (const Error e = check_dwconv_s16(c); e != Error::kOk) return e;
  return ok_if(kernels::dwconv_s16_dsp_refusal(c.get_params<kernels::DwConvParams>()) == Refusal::kNone &&
               weighted_inputs_constant(c));
}
Error check_avgpool_s16_dsp(const OpCheck& c) {
  if (const Error e = check_pool_s16(c); e != Error::kOk) return e;
  return ok_if(kernels::avgpool_s16_dsp_refusal(c.get_params<kernels::PoolParams>()) == Refusal::kNone);
}

}  // namespace mcuflow::ops
