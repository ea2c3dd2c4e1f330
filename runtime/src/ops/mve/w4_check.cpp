// Checks of the MVE int4-weight kernels (checks.h): the w4 reference's check, the kernel's
// refusal and its scratch (kernels_mve.h). Nothing prepared to verify: each call builds its int8
// kernel's inputs from the reference's own.
#include "checks.h"
#include "mcuflow/kernels/kernels_mve.h"

namespace mcuflow::ops {
namespace {

template <typename P, Error (*kReference)(const OpCheck&), kernels::Refusal (*kRefusal)(const P&),
          int32_t (*kScratchBytes)(const P&)>
Error check_w4(const OpCheck& c) {
  if (const Error e = kReference(c); e != Error::kOk) return e;
  const auto& p = c.get_params<P>();
  return ok_if(kRefusal(p) == kernels::Refusal::kNone &&
               mve::scratch_valid(c, kernels::kMveW4ScratchSlot, uint64_t(kScratchBytes(p))));
}

}  // namespace

Error check_conv_s8_w4_1x1_mve(const OpCheck& c) {
  return check_w4<kernels::ConvParams, check_conv_s8_w4, kernels::conv_s8_w4_1x1_mve_refusal,
                  kernels::mve_conv_w4_1x1_scratch_bytes>(c);
}
Error check_conv_s8_w4_mve(const OpCheck& c) {
  return check_w4<kernels::ConvParams, check_conv_s8_w4, kernels::conv_s8_w4_mve_refusal,
                  kernels::mve_conv_w4_scratch_bytes>(c);
}
Error check_dwconv_s8_w4_mve(const OpCheck& c) {
  return check_w4<kernels::DwConvParams, check_dwconv_s8_w4, kernels::dwconv_s8_w4_mve_refusal,
                  kernels::mve_dw_w4_scratch_bytes>(c);
}
Error check_fc_s8_w4_mve(const OpCheck& c) {
  return check_w4<kernels::FcParams, check_fc_s8_w4, kernels::fc_s8_w4_mve_refusal, kernels::mve_fc_w4_scratch_bytes>(c);
}

}  // namespace mcuflow::ops
