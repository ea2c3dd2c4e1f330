// Check of the scalar (Armv6-M) 3x3 depthwise conv (checks.h).
#include "check_helpers.h"
#include "mcuflow/kernels/kernels_scalar.h"

namespace mcuflow::ops {

Error check_dwconv_s8_3x3_scalar(const OpCheck& c) {
  if (const Error e = check_dwconv_s8(c); e != Error::kOk) return e;
  const auto& p = c.get_params<kernels::DwConvParams>();
  return ok_if(kernels::dwconv_s8_3x3_scalar_refusal(p) == kernels::Refusal::kNone &&
               scalar::prepared_matches(c, kernels::scalar_dw3_prepared_words(p.in_c),
                                        [&](const int8_t* w, const int32_t* bias, const int32_t* multipliers,
                                            const int32_t* shifts, int32_t i) {
                                          return kernels::scalar_dw3_prepared_word(w, bias, multipliers, shifts, p.in_c,
                                                                                   p.input_offset, i);
                                        }));
}

}  // namespace mcuflow::ops
