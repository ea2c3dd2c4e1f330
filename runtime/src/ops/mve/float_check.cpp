// Checks of the float32 MVE kernels (checks.h): their references', and the shapes they handle.
#include "checks.h"
#include "mcuflow/kernels/kernels_mve.h"

namespace mcuflow::ops {

Error check_conv_f32_mve(const OpCheck& c) {
  if (const Error e = check_conv_f32(c); e != Error::kOk) return e;
  return ok_if(kernels::conv_f32_mve_refusal(c.get_params<kernels::ConvParams>()) == kernels::Refusal::kNone);
}

Error check_dwconv_f32_mve(const OpCheck& c) {
  if (const Error e = check_dwconv_f32(c); e != Error::kOk) return e;
  return ok_if(kernels::dwconv_f32_mve_refusal(c.get_params<kernels::DwConvParams>()) == kernels::Refusal::kNone);
}

}  // namespace mcuflow::ops
