// Device adapter for the MVE average pooling kernel avgpool_s8_mve: the input and check of
// avgpool_s8.
#include "checks.h"
#include "mcuflow/kernels/kernels_mve.h"

namespace mcuflow::ops {
namespace {

void eval_avgpool_s8_mve(const OpCall& c) {
  kernels::avgpool_s8_mve(c.get_params<kernels::PoolParams>(), c.in<int8_t>(0), c.out<int8_t>(0));
}

}  // namespace

extern const KernelEntry kernel_entry_avgpool_s8_mve = kernel_check_avgpool_s8_mve.with_eval(eval_avgpool_s8_mve);

}  // namespace mcuflow::ops
