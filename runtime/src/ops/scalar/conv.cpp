// Device adapters for the scalar (Armv6-M) conv kernels: checks.h lists their inputs and checks.
#include "checks.h"
#include "mcuflow/kernels/kernels_scalar.h"

namespace mcuflow::ops {
namespace {

using kernels::ConvParams;

void eval_conv_s8_1x1_scalar(const OpCall& c) {
  kernels::conv_s8_1x1_scalar(c.get_params<ConvParams>(), c.in<int8_t>(0), c.in<int32_t>(kernels::kScalarPreparedSlot),
                              reinterpret_cast<int32_t*>(c.data[kernels::kScalarWindowSlot]), c.out<int8_t>(0));
}

void eval_conv_s8_scalar(const OpCall& c) {
  kernels::conv_s8_scalar(c.get_params<ConvParams>(), c.in<int8_t>(0), c.in<int32_t>(kernels::kScalarPreparedSlot),
                          reinterpret_cast<int32_t*>(c.data[kernels::kScalarWindowSlot]), c.out<int8_t>(0));
}

}  // namespace

extern const KernelEntry kernel_entry_conv_s8_1x1_scalar =
    kernel_check_conv_s8_1x1_scalar.with_eval(eval_conv_s8_1x1_scalar);
extern const KernelEntry kernel_entry_conv_s8_scalar = kernel_check_conv_s8_scalar.with_eval(eval_conv_s8_scalar);

}  // namespace mcuflow::ops
