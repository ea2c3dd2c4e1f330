// Device adapters for the MVE pooling kernels avgpool_s8_mve and maxpool_s8_mve: the input and
// check of their references.
#include "checks.h"
#include "mcuflow/kernels/kernels_mve.h"

namespace mcuflow::ops {
namespace {

void eval_avgpool_s8_mve(const OpCall& c) {
  kernels::avgpool_s8_mve(c.get_params<kernels::PoolParams>(), c.in<int8_t>(0), c.out<int8_t>(0));
}

void eval_maxpool_s8_mve(const OpCall& c) {
  kernels::maxpool_s8_mve(c.get_params<kernels::PoolParams>(), c.in<int8_t>(0), c.out<int8_t>(0));
}

}  // namespace

extern const KernelEntry kernel_entry_avgpool_s8_mve = kernel_check_avgpool_s8_mve.with_eval(eval_avgpool_s8_mve);
extern const KernelEntry kernel_entry_maxpool_s8_mve = kernel_check_maxpool_s8_mve.with_eval(eval_maxpool_s8_mve);

}  // namespace mcuflow::ops
