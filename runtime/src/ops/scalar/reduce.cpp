// Device adapter for the scalar (Armv6-M) sum / mean kernel reduce_s8_scalar (checks.h).
#include "checks.h"
#include "mcuflow/kernels/kernels_scalar.h"

namespace mcuflow::ops {
namespace {

void eval_reduce_s8_scalar(const OpCall& c) {
  kernels::reduce_s8_scalar(c.get_params<kernels::ReduceParams>(), c.in<int8_t>(0), c.out<int8_t>(0));
}

}  // namespace

extern const KernelEntry kernel_entry_reduce_s8_scalar = kernel_check_reduce_s8_scalar.with_eval(eval_reduce_s8_scalar);

}  // namespace mcuflow::ops
