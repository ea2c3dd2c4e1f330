// Device adapters for the scalar (Armv6-M) pooling kernels: checks.h lists their inputs and checks.
#include "checks.h"
#include "mcuflow/kernels/kernels_scalar.h"

namespace mcuflow::ops {
namespace {

void eval_avgpool_s8_scalar(const OpCall& c) {
  kernels::avgpool_s8_scalar(c.get_params<kernels::PoolParams>(), c.in<int8_t>(0),
                             c.in<int32_t>(kernels::kScalarPoolReciprocalSlot), c.out<int8_t>(0));
}

void eval_maxpool_s8_scalar(const OpCall& c) {
  kernels::maxpool_s8_scalar(c.get_params<kernels::PoolParams>(), c.in<int8_t>(0), c.out<int8_t>(0));
}

}  // namespace

extern const KernelEntry kernel_entry_avgpool_s8_scalar =
    kernel_check_avgpool_s8_scalar.with_eval(eval_avgpool_s8_scalar);
extern const KernelEntry kernel_entry_maxpool_s8_scalar =
    kernel_check_maxpool_s8_scalar.with_eval(eval_maxpool_s8_scalar);

}  // namespace mcuflow::ops
