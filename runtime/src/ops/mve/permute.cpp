// Device adapter for permute_b8_mve (checks.h).
#include "checks.h"
#include "mcuflow/kernels/kernels_mve.h"

namespace mcuflow::ops {
namespace {

void eval_permute_b8_mve(const OpCall& c) {
  kernels::permute_b8_mve(c.get_params<kernels::PermuteParams>(), c.in<int8_t>(0), c.out<int8_t>(0));
}

}  // namespace

extern const KernelEntry kernel_entry_permute_b8_mve = kernel_check_permute_b8_mve.with_eval(eval_permute_b8_mve);

}  // namespace mcuflow::ops
