// Adapter for the MVE average pooling kernel avgpool_s8_mve: the input of avgpool_s8.
#include "../check.h"
#include "mcuflow/kernels/kernels_mve.h"

namespace mcuflow::ops {
namespace {

void eval_avgpool_s8_mve(const OpCall& c) {
  kernels::avgpool_s8_mve(c.get_params<kernels::PoolParams>(), c.in<int8_t>(0), c.out<int8_t>(0));
}

}  // namespace

extern const KernelEntry kernel_entry_avgpool_s8_mve = {sizeof(kernels::PoolParams), 1, 1, check_pool_s8,
                                                        eval_avgpool_s8_mve};

}  // namespace mcuflow::ops
