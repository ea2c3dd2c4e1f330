// Adapters for the scalar (Armv6-M) conv kernels. Inputs: the reference's five (input, weights,
// bias, multipliers, shifts), then the prepared input (bias' and grouped weights,
// kernels_scalar.h), recomputed here from the reference's weights and bias so the device
// computes what the host's reference kernel computes; conv_s8_scalar then takes its window
// scratch.
#include "../check.h"
#include "mcuflow/kernels/kernels_scalar.h"

namespace mcuflow::ops {
namespace {

using kernels::ConvParams;

constexpr uint32_t kPreparedSlot = 5, kWindowSlot = 6;

// The reference's checks, constant weights, bias and tables, and the prepared input equal to
// its recomputation from them.
Error check_scalar_conv(const OpCheck& c) {
  if (const Error e = check_conv_s8(c); e != Error::kOk) return e;
  for (uint32_t slot = 1; slot <= 4; ++slot) {
    if (c.tensor(slot).storage != format::Storage::kConstant) return Error::kBadParams;
  }
  const auto& p = c.get_params<ConvParams>();
  const int32_t depth = p.k_h * p.k_w * p.in_c;
  const int32_t words = kernels::scalar_gemm_prepared_words(p.out_c, depth);
  const format::TensorRecord& prepared = c.tensor(kPreparedSlot);
  if (!tensor_is(c, kPreparedSlot, format::DType::kInt32, uint64_t(words)) ||
      prepared.storage != format::Storage::kConstant || prepared.offset % 4 != 0)
    return Error::kBadParams;
  const auto* weights = reinterpret_cast<const int8_t*>(c.constants + c.tensor(1).offset);
  const auto* bias = reinterpret_cast<const int32_t*>(c.constants + c.tensor(2).offset);
  const auto* words_in = reinterpret_cast<const int32_t*>(c.constants + prepared.offset);
  for (int32_t i = 0; i < words; ++i) {
    if (words_in[i] != kernels::scalar_gemm_prepared_word(weights, bias, p.out_c, depth, p.input_offset, i))
      return Error::kBadParams;
  }
  return Error::kOk;
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
                              c.in<int32_t>(3), c.in<int32_t>(4), c.out<int8_t>(0));
}

void eval_conv_s8_scalar(const OpCall& c) {
  kernels::conv_s8_scalar(c.get_params<ConvParams>(), c.in<int8_t>(0), c.in<int32_t>(kPreparedSlot),
                          c.in<int32_t>(3), c.in<int32_t>(4),
                          reinterpret_cast<int8_t*>(c.data[kWindowSlot]), c.out<int8_t>(0));
}

}  // namespace

extern const KernelEntry kernel_entry_conv_s8_1x1_scalar = {sizeof(ConvParams), 6, 1, check_conv_s8_1x1_scalar,
                                                            eval_conv_s8_1x1_scalar};
extern const KernelEntry kernel_entry_conv_s8_scalar = {sizeof(ConvParams), 7, 1, check_conv_s8_scalar,
                                                        eval_conv_s8_scalar};

}  // namespace mcuflow::ops
