// Device adapter for the MVE fully connected kernel: checks.h lists its inputs and check.
#include "checks.h"
#include "mcuflow/kernels/kernels_mve.h"

namespace mcuflow::ops {
namespace {

void eval_fc_s8_mve(const OpCall& c) {
  const auto& p = c.get_params<kernels::FcParams>();
  kernels::fc_s8_mve(p, c.in<int8_t>(0), c.in<int8_t>(1), c.in<uint8_t>(kernels::kMvePreparedSlot),
                     p.rows == 1 ? nullptr : mve::scratch(c), c.out<int8_t>(0));
}

}  // namespace

extern const KernelEntry kernel_entry_fc_s8_mve = kernel_check_fc_s8_mve.with_eval(eval_fc_s8_mve);

}  // namespace mcuflow::ops
