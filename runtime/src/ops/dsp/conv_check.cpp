// Checks of the DSP conv kernels (checks.h).
#include "check_helpers.h"

namespace mcuflow::ops {
namespace {

using kernels::ConvParams;

// The reference's checks, then the kernel's contract (kernels_dsp.h): its refusal of the params,
// constant weights and tables, and its scratch.
template <Error (*kReference)(const OpCheck&), kernels::Refusal (*kRefusal)(const ConvParams&),
          int32_t (*kScratchBytes)(const ConvParams&)>
Error check_dsp_conv(const OpCheck& c) {
  if (const Error e = kReference(c); e != Error::kOk) return e;
  const auto& p = c.get_params<ConvParams>();
  return ok_if(kRefusal(p) == kernels::Refusal::kNone && weighted_inputs_constant(c) &&
               dsp::scratch_fits(c, kernels::kDspConvScratchSlot, uint64_t(kScratchBytes(p))));
}

}  // namespace

Error check_conv_s8_dsp(const OpCheck& c) {
  return check_dsp_conv<check_conv_s8, kernels::conv_s8_dsp_refusal, kernels::dsp_conv_scratch_bytes>(c);
}
// Also the prepared input equal to its recomputation from the reference's weights and tables.
Error check_conv_s8_1x1_dsp(const OpCheck& c) {
  if (const Error e = check_dsp_conv<check_conv_s8, kernels::conv_s8_1x1_dsp_refusal, kernels::dsp_pw_scratch_bytes>(c);
      e != Error::kOk)
    return e;
  const auto& p = c.get_params<ConvParams>();
  const auto table = [&](uint32_t slot) {
    return reinterpret_cast<const int32_t*>(c.constants + c.tensor(slot).offset);
  };
  const kernels::ConvTables t{dsp::weights(c), table(kernels::kBiasSlot), table(kernels::kMultipliersSlot),
                              table(kernels::kShiftsSlot)};
  return ok_if(dsp::walk_matches(c, kernels::kDspPwPreparedSlot, kernels::dsp_pw_prepared_words(p),
                                 [&](auto same) { return kernels::dsp_pw_walk_prepared(p, t, same); }));
}
Error check_conv_s8_w4_dsp(const OpCheck& c) {
  return check_dsp_conv<check_conv_s8_w4, kernels::conv_s8_w4_dsp_refusal, kernels::dsp_conv_w4_scratch_bytes>(c);
}
Error check_conv_s8_w4_1x1_dsp(const OpCheck& c) {
  return check_dsp_conv<check_conv_s8_w4, kernels::conv_s8_w4_1x1_dsp_refusal, kernels::dsp_conv_w4_scratch_bytes>(c);
}

}  // namespace mcuflow::ops
