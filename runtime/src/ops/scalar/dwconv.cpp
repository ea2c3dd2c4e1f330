// Device adapters for the scalar (Thumb) depthwise convs: checks.h lists their inputs and checks.
#include "checks.h"
#include "mcuflow/kernels/kernels_scalar.h"

namespace mcuflow::ops {
namespace {

void eval_dwconv_s8_3x3_scalar(const OpCall& c) {
  kernels::dwconv_s8_3x3_scalar(c.get_params<kernels::DwConvParams>(), c.in<int8_t>(0),
                                c.in<int32_t>(kernels::kScalarPreparedSlot), c.out<int8_t>(0));
}

void eval_dwconv_s8_scalar(const OpCall& c) {
  kernels::dwconv_s8_scalar(c.get_params<kernels::DwConvParams>(), c.in<int8_t>(0),
                            c.in<int32_t>(kernels::kScalarPreparedSlot),
                            reinterpret_cast<uintptr_t*>(c.data[kernels::kScalarWindowSlot]), c.out<int8_t>(0));
}

}  // namespace

extern const KernelEntry kernel_entry_dwconv_s8_3x3_scalar =
    kernel_check_dwconv_s8_3x3_scalar.with_eval(eval_dwconv_s8_3x3_scalar);
extern const KernelEntry kernel_entry_dwconv_s8_scalar = kernel_check_dwconv_s8_scalar.with_eval(eval_dwconv_s8_scalar);

}  // namespace mcuflow::ops
