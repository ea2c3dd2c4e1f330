// Device adapters for the DSP conv kernels: checks.h lists their inputs and checks.
#include "checks.h"
#include "mcuflow/kernels/kernels_dsp.h"

namespace mcuflow::ops {
namespace {

using kernels::ConvParams;

void eval_conv_s8_dsp(const OpCall& c) {
  kernels::conv_s8_dsp(c.get_params<ConvParams>(), c.in<int8_t>(0), c.in<int8_t>(1), c.in<int32_t>(2),
                       c.in<int32_t>(3), c.in<int32_t>(4),
                       reinterpret_cast<int16_t*>(c.data[kernels::kDspConvScratchSlot]), c.out<int8_t>(0));
}

// The prepared input (widened weights and requantization, kernels_dsp.h) in place of the weights
// and multipliers.
void eval_conv_s8_1x1_dsp(const OpCall& c) {
  kernels::conv_s8_1x1_dsp(c.get_params<ConvParams>(), c.in<int8_t>(0), c.in<int32_t>(kernels::kDspPwPreparedSlot),
                           c.in<int32_t>(kernels::kBiasSlot), c.in<int32_t>(kernels::kShiftsSlot),
                           reinterpret_cast<int16_t*>(c.data[kernels::kDspConvScratchSlot]), c.out<int8_t>(0));
}

// Packed int4 weights; the scratch starts with their unpacked copy (kernels_dsp.h).
template <void (*kKernel)(const ConvParams&, const int8_t*, const uint8_t*, const int32_t*, const int32_t*,
                          const int32_t*, int8_t*, int8_t*)>
void eval_w4(const OpCall& c) {
  kKernel(c.get_params<ConvParams>(), c.in<int8_t>(0), c.in<uint8_t>(1), c.in<int32_t>(2), c.in<int32_t>(3),
          c.in<int32_t>(4), reinterpret_cast<int8_t*>(c.data[kernels::kDspW4ScratchSlot]), c.out<int8_t>(0));
}

}  // namespace

extern const KernelEntry kernel_entry_conv_s8_w4_1x1_dsp =
    kernel_check_conv_s8_w4_1x1_dsp.with_eval(eval_w4<kernels::conv_s8_w4_1x1_dsp>);
extern const KernelEntry kernel_entry_conv_s8_w4_dsp = kernel_check_conv_s8_w4_dsp.with_eval(eval_w4<kernels::conv_s8_w4_dsp>);
extern const KernelEntry kernel_entry_conv_s8_1x1_dsp = kernel_check_conv_s8_1x1_dsp.with_eval(eval_conv_s8_1x1_dsp);
extern const KernelEntry kernel_entry_conv_s8_dsp = kernel_check_conv_s8_dsp.with_eval(eval_conv_s8_dsp);

}  // namespace mcuflow::ops
