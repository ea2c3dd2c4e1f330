// Device adapters for the MVE convolution kernels and the int4-weight kernels (linear too): checks.h
// lists their inputs and checks.
#include "checks.h"
#include "mcuflow/kernels/kernels_mve.h"

namespace mcuflow::ops {
namespace {

using kernels::ConvParams;
using kernels::DwConvParams;

// The scratch is an input slot the kernels write: arena storage, checked at load.
void eval_conv_s8_1x1_mve(const OpCall& c) {
  kernels::conv_s8_1x1_mve(c.get_params<ConvParams>(), c.in<int8_t>(0), c.in<uint8_t>(kernels::kMvePreparedSlot),
                           mve::scratch(c), c.out<int8_t>(0));
}

void eval_conv_s8_mve(const OpCall& c) {
  kernels::conv_s8_mve(c.get_params<ConvParams>(), c.in<int8_t>(0), c.in<int8_t>(1), c.in<uint8_t>(kernels::kMvePreparedSlot),
                       mve::scratch(c), c.out<int8_t>(0));
}

void eval_dwconv_s8_mve(const OpCall& c) {
  kernels::dwconv_s8_mve(c.get_params<DwConvParams>(), c.in<int8_t>(0), c.in<uint8_t>(kernels::kMvePreparedSlot),
                         c.out<int8_t>(0));
}

// Packed int4 weights: the reference's inputs, then the scratch (kernels_mve.h).
template <typename P, void (*kKernel)(const P&, const int8_t*, const uint8_t*, const int32_t*, const int32_t*,
                                      const int32_t*, int8_t*, int8_t*)>
void eval_w4(const OpCall& c) {
  kKernel(c.get_params<P>(), c.in<int8_t>(0), c.in<uint8_t>(1), c.in<int32_t>(2), c.in<int32_t>(3), c.in<int32_t>(4),
          mve::scratch(c, kernels::kMveW4ScratchSlot), c.out<int8_t>(0));
}

}  // namespace

extern const KernelEntry kernel_entry_conv_s8_1x1_mve = kernel_check_conv_s8_1x1_mve.with_eval(eval_conv_s8_1x1_mve);
extern const KernelEntry kernel_entry_conv_s8_mve = kernel_check_conv_s8_mve.with_eval(eval_conv_s8_mve);
extern const KernelEntry kernel_entry_dwconv_s8_mve = kernel_check_dwconv_s8_mve.with_eval(eval_dwconv_s8_mve);
extern const KernelEntry kernel_entry_conv_s8_w4_1x1_mve =
    kernel_check_conv_s8_w4_1x1_mve.with_eval(eval_w4<ConvParams, kernels::conv_s8_w4_1x1_mve>);
extern const KernelEntry kernel_entry_conv_s8_w4_mve =
    kernel_check_conv_s8_w4_mve.with_eval(eval_w4<ConvParams, kernels::conv_s8_w4_mve>);
extern const KernelEntry kernel_entry_dwconv_s8_w4_mve =
    kernel_check_dwconv_s8_w4_mve.with_eval(eval_w4<DwConvParams, kernels::dwconv_s8_w4_mve>);
extern const KernelEntry kernel_entry_fc_s8_w4_mve =
    kernel_check_fc_s8_w4_mve.with_eval(eval_w4<kernels::FcParams, kernels::fc_s8_w4_mve>);

}  // namespace mcuflow::ops
