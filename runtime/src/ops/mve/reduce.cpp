// Device adapter for the MVE sum / mean kernel reduce_s8_mve (checks.h).
#include "checks.h"
#include "mcuflow/kernels/kernels_mve.h"

namespace mcuflow::ops {
namespace {

void eval_reduce_s8_mve(const OpCall& c) {
  kernels::reduce_s8_mve(c.get_params<kernels::ReduceParams>(), c.in<int8_t>(0), c.out<int8_t>(0));
}

}  // namespace

extern const KernelEntry kernel_entry_reduce_s8_mve = kernel_check_reduce_s8_mve.with_eval(eval_reduce_s8_mve);

}  // namespace mcuflow::ops
