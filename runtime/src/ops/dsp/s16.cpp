// Device adapters of the int16-activation DSP kernels (checks.h, s16_check.cpp).
#include "checks.h"
#include "mcuflow/kernels/kernels_dsp.h"

namespace mcuflow::ops {
namespace {

using kernels::ConvParams;

// The weighted kernels' inputs in their reference's slot order, then (conv, fc) the scratch.
template <typename Params, void (*kKernel)(const Params&, const int16_t*, const int8_t*, const int64_t*,
                                           const int32_t*, const int32_t*, int16_t*, int16_t*)>
void eval_scratch_s16(const OpCall& c) {
  kKernel(c.get_params<Params>(), c.in<int16_t>(0), c.in<int8_t>(1), c.in<int64_t>(2), c.in<int32_t>(3),
          c.in<int32_t>(4), reinterpret_cast<int16_t*>(c.data[kernels::kDspS16ScratchSlot]), c.out<int16_t>(0));
}

void eval_dwconv_s16_dsp(const OpCall& c) {
  kernels::dwconv_s16_dsp(c.get_params<kernels::DwConvParams>(), c.in<int16_t>(0), c.in<int8_t>(1), c.in<int64_t>(2),
                          c.in<int32_t>(3), c.in<int32_t>(4), c.out<int16_t>(0));
}

void eval_avgpool_s16_dsp(const OpCall& c) {
  kernels::avgpool_s16_dsp(c.get_params<kernels::PoolParams>(), c.in<int16_t>(0), c.out<int16_t>(0));
}

}  // namespace

extern const KernelEntry kernel_entry_conv_s16_1x1_dsp =
    kernel_check_conv_s16_1x1_dsp.with_eval(eval_scratch_s16<ConvParams, kernels::conv_s16_1x1_dsp>);
extern const KernelEntry kernel_entry_conv_s16_dsp =
    kernel_check_conv_s16_dsp.with_eval(eval_scratch_s16<ConvParams, kernels::conv_s16_dsp>);
extern const KernelEntry kernel_entry_fc_s16_dsp =
    kernel_check_fc_s16_dsp.with_eval(eval_scratch_s16<kernels::FcParams, kernels::fc_s16_dsp>);
extern const KernelEntry kernel_entry_dwconv_s16_dsp = kernel_check_dwconv_s16_dsp.with_eval(eval_dwconv_s16_dsp);
extern const KernelEntry kernel_entry_avgpool_s16_dsp = kernel_check_avgpool_s16_dsp.with_eval(eval_avgpool_s16_dsp);

}  // namespace mcuflow::ops
