// Device adapters for the float32 MVE kernels: checks.h lists their inputs and checks.
#include "checks.h"
#include "mcuflow/kernels/kernels_mve.h"

namespace mcuflow::ops {
namespace {

void eval_conv_f32_mve(const OpCall& c) {
  kernels::conv_f32_mve(c.get_params<kernels::ConvParams>(), c.in<float>(0), c.in<float>(1), c.in<float>(2),
                        c.out<float>(0));
}
void eval_dwconv_f32_mve(const OpCall& c) {
  kernels::dwconv_f32_mve(c.get_params<kernels::DwConvParams>(), c.in<float>(0), c.in<float>(1), c.in<float>(2),
                          c.out<float>(0));
}
void eval_fc_f32_mve(const OpCall& c) {
  kernels::fc_f32_mve(c.get_params<kernels::FcParams>(), c.in<float>(0), c.in<float>(1), c.in<float>(2),
                      c.out<float>(0));
}

}  // namespace

extern const KernelEntry kernel_entry_conv_f32_mve = kernel_check_conv_f32_mve.with_eval(eval_conv_f32_mve);
extern const KernelEntry kernel_entry_dwconv_f32_mve = kernel_check_dwconv_f32_mve.with_eval(eval_dwconv_f32_mve);
extern const KernelEntry kernel_entry_fc_f32_mve = kernel_check_fc_f32_mve.with_eval(eval_fc_f32_mve);

}  // namespace mcuflow::ops
