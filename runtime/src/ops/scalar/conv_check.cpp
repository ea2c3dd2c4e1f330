// Checks of the scalar (Armv6-M) conv kernels (checks.h).
#include "check_helpers.h"
#include "mcuflow/kernels/kernels_scalar.h"

namespace mcuflow::ops {
namespace {

using kernels::ConvParams;

Error check_scalar_conv(const OpCheck& c) {
  if (const Error e = check_conv_s8(c); e != Error::kOk) return e;
  const auto& p = c.get_params<ConvParams>();
  // prepared_matches first: it checks that the weights are constants before they are read
  return ok_if(scalar::prepared_matches(c, kernels::scalar_conv_prepared_words(p),
                                        [&](const int8_t* w, const int32_t* bias, const int32_t* multipliers,
                                            const int32_t* shifts, int32_t i) {
                                          return kernels::scalar_conv_prepared_word(p, w, bias, multipliers, shifts, i);
                                        }) &&
               kernels::scalar_weights_symmetric(scalar::constant_data<int8_t>(c, kernels::kWeightsSlot),
                                                 p.out_c * kernels::scalar_conv_depth(p)));
}

}  // namespace

Error check_conv_s8_1x1_scalar(const OpCheck& c) {
  if (const Error e = check_scalar_conv(c); e != Error::kOk) return e;
  const auto& p = c.get_params<ConvParams>();
  return ok_if(kernels::conv_s8_1x1_scalar_refusal(p) == kernels::Refusal::kNone &&
               scalar::scratch_holds(c, kernels::scalar_pointwise_row_bytes(p)));
}

Error check_conv_s8_scalar(const OpCheck& c) {
  if (const Error e = check_scalar_conv(c); e != Error::kOk) return e;
  const auto& p = c.get_params<ConvParams>();
  return ok_if(scalar::scratch_holds(c, kernels::scalar_conv_window_bytes(p)));
}

}  // namespace mcuflow::ops
