// Checks of the int16-activation MVE kernels (checks.h): the reference's check (conv_s16,
// dwconv_s16; fc_s16_mve takes fc_s16's as it is), plus each kernel's refusal.
#include "checks.h"
#include "mcuflow/kernels/kernels_mve.h"

namespace mcuflow::ops {

using kernels::ConvParams;
using kernels::DwConvParams;
using kernels::Refusal;

Error check_conv_s16_1x1_mve(const OpCheck& c) {
  if (const Error e = check_conv_s16(c); e != Error::kOk) return e;
  return ok_if(kernels::conv_s16_1x1_mve_refusal(c.get_params<ConvParams>()) == Refusal::kNone);
}
Error check_conv_s16_mve(const OpCheck& c) {
  if (const Error e = check_conv_s16(c); e != Error::kOk) return e;
  return ok_if(kernels::conv_s16_mve_refusal(c.get_params<ConvParams>()) == Refusal::kNone);
}
Error check_avgpool_s16_mve(const OpCheck& c) {
  if (const Error e = check_pool_s16(c); e != Error::kOk) return e;
  return ok_if(kernels::avgpool_s16_mve_refusal(c.get_params<kernels::PoolParams>()) == Refusal::kNone);
}
Error check_dwconv_s16_mve(const OpCheck& c) {
  if (const Error e = check_dwconv_s16(c); e != Error::kOk) return e;
  return ok_if(kernels::dwconv_s16_mve_refusal(c.get_params<DwConvParams>()) == Refusal::kNone);
}

}  // namespace mcuflow::ops
