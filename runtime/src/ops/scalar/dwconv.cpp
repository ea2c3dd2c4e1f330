// Adapter for the scalar (Armv6-M) 3x3 depthwise conv. Inputs: the reference's five (input,
// weights, bias, multipliers, shifts), then the prepared input (kernels_scalar.h), recomputed
// here from the reference's weights and bias.
#include "mcuflow/kernels/kernels_scalar.h"
#include "scalar_check.h"

namespace mcuflow::ops {
namespace {

using kernels::DwConvParams;

Error check_dwconv_s8_3x3_scalar(const OpCheck& c) {
  if (const Error e = check_dwconv_s8(c); e != Error::kOk) return e;
  const auto& p = c.get_params<DwConvParams>();
  return ok_if(p.k_h == 3 && p.k_w == 3 && p.ch_mult == 1 &&
               scalar::prepared_matches(c, kernels::scalar_dw3_prepared_words(p.in_c),
                                        [&](const int8_t* w, const int32_t* bias, const int32_t* multipliers,
                                            const int32_t* shifts, int32_t i) {
                                          return kernels::scalar_dw3_prepared_word(w, bias, multipliers, shifts, p.in_c,
                                                                                   p.input_offset, i);
                                        }));
}

void eval_dwconv_s8_3x3_scalar(const OpCall& c) {
  kernels::dwconv_s8_3x3_scalar(c.get_params<DwConvParams>(), c.in<int8_t>(0), c.in<int32_t>(scalar::kPreparedSlot),
                                c.out<int8_t>(0));
}

}  // namespace

extern const KernelEntry kernel_entry_dwconv_s8_3x3_scalar = {sizeof(DwConvParams), 6, 1, check_dwconv_s8_3x3_scalar,
                                                              eval_dwconv_s8_3x3_scalar};

}  // namespace mcuflow::ops
