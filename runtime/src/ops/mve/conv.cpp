// Adapters for the MVE convolution kernels: conv_s8_1x1_mve, conv_s8_mve, dwconv_s8_mve.
#include "prepared_inputs.h"
#include "mcuflow/kernels/kernels_mve.h"

namespace mcuflow::ops {
namespace {

using kernels::ConvParams;
using kernels::DwConvParams;

Error check_conv_s8_1x1_mve(const OpCheck& c) {
  const Error e = check_conv_s8(c);
  if (e != Error::kOk) return e;
  const auto& p = c.get_params<ConvParams>();
  // The kernel reads input pixel (oy * stride_h, ox * stride_w) without bounds checks.
  const bool pointwise = p.k_h == 1 && p.k_w == 1 && p.pad_top == 0 && p.pad_left == 0 &&
                         int64_t(p.out_h - 1) * p.stride_h < p.in_h && int64_t(p.out_w - 1) * p.stride_w < p.in_w;
  return ok_if(pointwise && mve::prepared_input_valid(c, kernels::MveGemmLayout{p.in_c, p.out_c}, p.input_offset, true) &&
               mve::scratch_valid(c, uint64_t(kernels::mve_pair_bytes(p.in_c))));
}

Error check_conv_s8_mve(const OpCheck& c) {
  const Error e = check_conv_s8(c);
  if (e != Error::kOk) return e;
  const auto& p = c.get_params<ConvParams>();
  const uint64_t depth = uint64_t(p.k_h) * p.k_w * p.in_c;  // the weights' size: below 2^24 once
                                                            // prepared_input_valid accepts them
  return ok_if(mve::prepared_input_valid(c, kernels::MveGemmLayout{int32_t(depth), p.out_c}, p.input_offset, true) &&
               mve::scratch_valid(c, uint64_t(kernels::mve_conv_scratch_bytes(int32_t(depth)))));
}

Error check_dwconv_s8_mve(const OpCheck& c) {
  const Error e = check_dwconv_s8(c);
  if (e != Error::kOk) return e;
  const auto& p = c.get_params<DwConvParams>();
  if (p.ch_mult != 1 || int64_t(p.k_h) * p.k_w > kernels::kMveDwMaxTaps) return Error::kBadParams;
  const int8_t* weights = mve::constant_data<int8_t>(c, 1);
  if (!weights || !kernels::mve_dw_weights_supported(weights, c.tensor(1).bytes)) return Error::kBadParams;
  return ok_if(mve::prepared_input_valid(c, kernels::MveDwLayout{p.in_c, p.k_h * p.k_w}, p.input_offset, true));
}

// The scratch is an input slot the kernels write: arena storage, checked above.
void eval_conv_s8_1x1_mve(const OpCall& c) {
  kernels::conv_s8_1x1_mve(c.get_params<ConvParams>(), c.in<int8_t>(0), c.in<int8_t>(1),
                           c.in<uint8_t>(mve::kPreparedSlot), mve::scratch(c), c.out<int8_t>(0));
}

void eval_conv_s8_mve(const OpCall& c) {
  kernels::conv_s8_mve(c.get_params<ConvParams>(), c.in<int8_t>(0), c.in<int8_t>(1), c.in<uint8_t>(mve::kPreparedSlot),
                       mve::scratch(c), c.out<int8_t>(0));
}

void eval_dwconv_s8_mve(const OpCall& c) {
  kernels::dwconv_s8_mve(c.get_params<DwConvParams>(), c.in<int8_t>(0), c.in<uint8_t>(mve::kPreparedSlot),
                         c.out<int8_t>(0));
}

}  // namespace

extern const KernelEntry kernel_entry_conv_s8_1x1_mve = {sizeof(ConvParams), 7, 1, check_conv_s8_1x1_mve,
                                                         eval_conv_s8_1x1_mve};
extern const KernelEntry kernel_entry_conv_s8_mve = {sizeof(ConvParams), 7, 1, check_conv_s8_mve, eval_conv_s8_mve};
extern const KernelEntry kernel_entry_dwconv_s8_mve = {sizeof(DwConvParams), 6, 1, check_dwconv_s8_mve,
                                                       eval_dwconv_s8_mve};

}  // namespace mcuflow::ops
