// Checks of the scalar (Thumb) depthwise convs (checks.h).
#include "check_helpers.h"
#include "mcuflow/kernels/kernels_scalar.h"

namespace mcuflow::ops {
namespace {

// The reference's check, then the kernel's refusal and its prepared input (kernels_scalar.h).
Error check_scalar_dwconv(const OpCheck& c, kernels::Refusal (*refusal)(const kernels::DwConvParams&)) {
  if (const Error e = check_dwconv_s8(c); e != Error::kOk) return e;
  const auto& p = c.get_params<kernels::DwConvParams>();
  return ok_if(refusal(p) == kernels::Refusal::kNone &&
               scalar::prepared_matches(c, kernels::scalar_dw_prepared_words(p),
                                        [&](const int8_t* w, const int32_t* bias, const int32_t* multipliers,
                                            const int32_t* shifts, int32_t i) {
                                          return kernels::scalar_dw_prepared_word(p, w, bias, multipliers, shifts, i);
                                        }));
}

}  // namespace

Error check_dwconv_s8_3x3_scalar(const OpCheck& c) {
  return check_scalar_dwconv(c, kernels::dwconv_s8_3x3_scalar_refusal);
}

Error check_dwconv_s8_scalar(const OpCheck& c) {
  if (const Error e = check_scalar_dwconv(c, kernels::dwconv_s8_scalar_refusal); e != Error::kOk) return e;
  return ok_if(scalar::scratch_holds(c, kernels::scalar_dw_taps_bytes(c.get_params<kernels::DwConvParams>())));
}

}  // namespace mcuflow::ops
