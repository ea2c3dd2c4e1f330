// Device adapters for the MVE convolution kernels: checks.h lists their inputs and checks.
#include "checks.h"
#include "mcuflow/kernels/kernels_mve.h"

namespace mcuflow::ops {
namespace {

using kernels::ConvParams;
using kernels::DwConvParams;

// The scratch is an input slot the kernels write: arena storage, checked at load.
void eval_conv_s8_1x1_mve(const OpCall& c) {
  kernels::conv_s8_1x1_mve(c.get_params<ConvParams>(), c.in<int8_t>(0), c.in<int8_t>(1),
                           c.in<uint8_t>(kernels::kMvePreparedSlot), mve::scratch(c), c.out<int8_t>(0));
}

void eval_conv_s8_mve(const OpCall& c) {
  kernels::conv_s8_mve(c.get_params<ConvParams>(), c.in<int8_t>(0), c.in<int8_t>(1), c.in<uint8_t>(kernels::kMvePreparedSlot),
                       mve::scratch(c), c.out<int8_t>(0));
}

void eval_dwconv_s8_mve(const OpCall& c) {
  kernels::dwconv_s8_mve(c.get_params<DwConvParams>(), c.in<int8_t>(0), c.in<uint8_t>(kernels::kMvePreparedSlot),
                         c.out<int8_t>(0));
}

}  // namespace

extern const KernelEntry kernel_entry_conv_s8_1x1_mve = kernel_check_conv_s8_1x1_mve.with_eval(eval_conv_s8_1x1_mve);
extern const KernelEntry kernel_entry_conv_s8_mve = kernel_check_conv_s8_mve.with_eval(eval_conv_s8_mve);
extern const KernelEntry kernel_entry_dwconv_s8_mve = kernel_check_dwconv_s8_mve.with_eval(eval_dwconv_s8_mve);

}  // namespace mcuflow::ops
