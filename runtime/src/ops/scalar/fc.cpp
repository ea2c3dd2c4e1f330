// Device adapter for the scalar (Armv6-M) fully connected kernel: checks.h lists its inputs and
// check.
#include "checks.h"
#include "mcuflow/kernels/kernels_scalar.h"

namespace mcuflow::ops {
namespace {

void eval_fc_s8_scalar(const OpCall& c) {
  kernels::fc_s8_scalar(c.get_params<kernels::FcParams>(), c.in<int8_t>(0), c.in<int32_t>(kernels::kScalarPreparedSlot),
                        c.out<int8_t>(0));
}

}  // namespace

extern const KernelEntry kernel_entry_fc_s8_scalar = kernel_check_fc_s8_scalar.with_eval(eval_fc_s8_scalar);

}  // namespace mcuflow::ops
