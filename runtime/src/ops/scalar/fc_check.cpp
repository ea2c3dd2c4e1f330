// Check of the scalar (Armv6-M) fully connected kernel (checks.h).
#include "check_helpers.h"
#include "mcuflow/kernels/kernels_scalar.h"

namespace mcuflow::ops {

Error check_fc_s8_scalar(const OpCheck& c) {
  if (const Error e = check_fc_s8(c); e != Error::kOk) return e;
  const auto& p = c.get_params<kernels::FcParams>();
  const int32_t step = p.per_channel ? 1 : 0;
  // prepared_matches first: it checks that the weights are constants before they are read
  return ok_if(scalar::prepared_matches(c, kernels::scalar_gemm_prepared_words(p.out_c, p.in_c),
                                        [&](const int8_t* w, const int32_t* bias, const int32_t* multipliers,
                                            const int32_t* shifts, int32_t i) {
                                          return kernels::scalar_gemm_prepared_word(w, bias, multipliers, shifts, step,
                                                                                    p.out_c, p.in_c, p.input_offset, i);
                                        }) &&
               kernels::scalar_weights_symmetric(scalar::constant_data<int8_t>(c, kernels::kWeightsSlot), p.out_c * p.in_c));
}

}  // namespace mcuflow::ops
