// Checks of the scalar (Armv6-M) conv kernels (checks.h).
#include "check_helpers.h"
#include "mcuflow/kernels/kernels_scalar.h"

namespace mcuflow::ops {
namespace {

using kernels::ConvParams;

Error check_scalar_conv(const OpCheck& c) {
  if (const Error e = check_conv_s8(c); e != Error::kOk) return e;
  const auto& p = c.get_params<ConvParams>();
  const int32_t depth = p.k_h * p.k_w * p.in_c;
  // prepared_matches first: it checks that the weights are constants before they are read
  return ok_if(scalar::prepared_matches(c, kernels::scalar_gemm_prepared_words(p.out_c, depth),
                                        [&](const int8_t* w, const int32_t* bias, const int32_t* multipliers,
                                            const int32_t* shifts, int32_t i) {
                                          return kernels::scalar_gemm_prepared_word(w, bias, multipliers, shifts, 1,
                                                                                    p.out_c, depth, p.input_offset, i);
                                        }) &&
               kernels::scalar_weights_symmetric(scalar::constant_data<int8_t>(c, 1), p.out_c * depth));
}

}  // namespace

Error check_conv_s8_1x1_scalar(const OpCheck& c) {
  if (const Error e = check_scalar_conv(c); e != Error::kOk) return e;
  const auto& p = c.get_params<ConvParams>();
  // Every output pixel reads one input pixel: no padding, the strided grid inside the input.
  return ok_if(p.k_h == 1 && p.k_w == 1 && p.pad_top == 0 && p.pad_left == 0 &&
               int64_t(p.out_h - 1) * p.stride_h < p.in_h && int64_t(p.out_w - 1) * p.stride_w < p.in_w);
}

Error check_conv_s8_scalar(const OpCheck& c) {
  if (const Error e = check_scalar_conv(c); e != Error::kOk) return e;
  const auto& p = c.get_params<ConvParams>();
  const format::TensorRecord& window = c.tensor(scalar::kWindowSlot);
  return ok_if(window.storage == format::Storage::kArena &&
               window.bytes >= uint64_t(p.k_h) * uint64_t(p.k_w) * uint64_t(p.in_c));
}

}  // namespace mcuflow::ops
