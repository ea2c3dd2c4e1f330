// Device adapters for the float32 DSP-tier kernels: checks.h lists their inputs and checks.
#include "checks.h"

namespace mcuflow::ops {
namespace {

void eval_conv_f32_dsp(const OpCall& c) {
  kernels::conv_f32_dsp(c.get_params<kernels::ConvParams>(), c.in<float>(0), c.in<float>(1), c.in<float>(2),
                        c.out<float>(0));
}
void eval_conv_f32_1x1_dsp(const OpCall& c) {
  kernels::conv_f32_1x1_dsp(c.get_params<kernels::ConvParams>(), c.in<float>(0), c.in<float>(1), c.in<float>(2),
                            c.out<float>(0));
}
void eval_dwconv_f32_dsp(const OpCall& c) {
  kernels::dwconv_f32_dsp(c.get_params<kernels::DwConvParams>(), c.in<float>(0), c.in<float>(1), c.in<float>(2),
                          c.out<float>(0));
}
void eval_fc_f32_dsp(const OpCall& c) {
  kernels::fc_f32_dsp(c.get_params<kernels::FcParams>(), c.in<float>(0), c.in<float>(1), c.in<float>(2),
                      c.out<float>(0));
}

}  // namespace

extern const KernelEntry kernel_entry_conv_f32_dsp = kernel_check_conv_f32_dsp.with_eval(eval_conv_f32_dsp);
extern const KernelEntry kernel_entry_conv_f32_1x1_dsp = kernel_check_conv_f32_1x1_dsp.with_eval(eval_conv_f32_1x1_dsp);
extern const KernelEntry kernel_entry_dwconv_f32_dsp = kernel_check_dwconv_f32_dsp.with_eval(eval_dwconv_f32_dsp);
extern const KernelEntry kernel_entry_fc_f32_dsp = kernel_check_fc_f32_dsp.with_eval(eval_fc_f32_dsp);

}  // namespace mcuflow::ops
