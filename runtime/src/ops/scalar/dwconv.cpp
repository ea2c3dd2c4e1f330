// Device adapter for the scalar (Armv6-M) 3x3 depthwise conv: checks.h lists its inputs and check.
#include "checks.h"
#include "mcuflow/kernels/kernels_scalar.h"

namespace mcuflow::ops {
namespace {

void eval_dwconv_s8_3x3_scalar(const OpCall& c) {
  kernels::dwconv_s8_3x3_scalar(c.get_params<kernels::DwConvParams>(), c.in<int8_t>(0),
                                c.in<int32_t>(kernels::kScalarPreparedSlot), c.out<int8_t>(0));
}

}  // namespace

extern const KernelEntry kernel_entry_dwconv_s8_3x3_scalar =
    kernel_check_dwconv_s8_3x3_scalar.with_eval(eval_dwconv_s8_3x3_scalar);

}  // namespace mcuflow::ops
