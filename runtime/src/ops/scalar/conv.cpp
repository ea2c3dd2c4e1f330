// Adapters for the scalar (Armv6-M) conv kernels. Inputs: the reference's five (input, weights,
// bias, multipliers, shifts), then the prepared input (bias', requantization words and grouped weights,
// kernels_scalar.h), recomputed here from the reference's weights and bias so the device
// computes what the host's reference kernel computes; conv_s8_scalar then takes its window
// scratch.
#include "scalar_check.h"
#include "mcuflow/kernels/kernels_scalar.h"

namespace mcuflow::ops {
namespace {

using kernels::ConvParams;

using scalar::kPreparedSlot;
constexpr uint32_t kWindowSlot = 6;

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
  const format::TensorRecord& window = c.tensor(kWindowSlot);
  return ok_if(window.storage == format::Storage::kArena &&
               window.bytes >= uint64_t(p.k_h) * uint64_t(p.k_w) * uint64_t(p.in_c));
}

void eval_conv_s8_1x1_scalar(const OpCall& c) {
  kernels::conv_s8_1x1_scalar(c.get_params<ConvParams>(), c.in<int8_t>(0), c.in<int32_t>(kPreparedSlot),
                              c.out<int8_t>(0));
}

void eval_conv_s8_scalar(const OpCall& c) {
  kernels::conv_s8_scalar(c.get_params<ConvParams>(), c.in<int8_t>(0), c.in<int32_t>(kPreparedSlot),
                          reinterpret_cast<int8_t*>(c.data[kWindowSlot]), c.out<int8_t>(0));
}

}  // namespace

extern const KernelEntry kernel_entry_conv_s8_1x1_scalar = {sizeof(ConvParams), 6, 1, check_conv_s8_1x1_scalar,
                                                            eval_conv_s8_1x1_scalar};
extern const KernelEntry kernel_entry_conv_s8_scalar = {sizeof(ConvParams), 7, 1, check_conv_s8_scalar,
                                                        eval_conv_s8_scalar};

}  // namespace mcuflow::ops
