// Device adapters of the int16-activation MVE kernels (checks.h, s16_check.cpp).
#include "checks.h"
#include "mcuflow/kernels/kernels_mve.h"

namespace mcuflow::ops {

using kernels::ConvParams;
using kernels::DwConvParams;

namespace {

// The weighted int16 kernels' inputs in their reference's slot order.
template <typename Params, void (*kKernel)(const Params&, const int16_t*, const int8_t*, const int64_t*,
                                           const int32_t*, const int32_t*, int16_t*)>
void eval_weighted_s16(const OpCall& c) {
  kKernel(c.get_params<Params>(), c.in<int16_t>(0), c.in<int8_t>(1), c.in<int64_t>(2), c.in<int32_t>(3),
          c.in<int32_t>(4), c.out<int16_t>(0));
}

void eval_avgpool_s16_mve(const OpCall& c) {
  kernels::avgpool_s16_mve(c.get_params<kernels::PoolParams>(), c.in<int16_t>(0), c.out<int16_t>(0));
}

}  // namespace

extern const KernelEntry kernel_entry_avgpool_s16_mve = kernel_check_avgpool_s16_mve.with_eval(eval_avgpool_s16_mve);
extern const KernelEntry kernel_entry_conv_s16_1x1_mve =
    kernel_check_conv_s16_1x1_mve.with_eval(eval_weighted_s16<ConvParams, kernels::conv_s16_1x1_mve>);
extern const KernelEntry kernel_entry_conv_s16_mve =
    kernel_check_conv_s16_mve.with_eval(eval_weighted_s16<ConvParams, kernels::conv_s16_mve>);
extern const KernelEntry kernel_entry_dwconv_s16_mve =
    kernel_check_dwconv_s16_mve.with_eval(eval_weighted_s16<DwConvParams, kernels::dwconv_s16_mve>);
extern const KernelEntry kernel_entry_fc_s16_mve =
    kernel_check_fc_s16_mve.with_eval(eval_weighted_s16<kernels::FcParams, kernels::fc_s16_mve>);

}  // namespace mcuflow::ops
