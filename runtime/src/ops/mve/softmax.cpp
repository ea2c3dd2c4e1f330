// Device adapter for softmax_s8_mve: checks.h lists its inputs and check.
#include "checks.h"
#include "mcuflow/kernels/kernels_mve.h"

namespace mcuflow::ops {
namespace {

void eval_softmax_s8_mve(const OpCall& c) {
  kernels::softmax_s8_mve(c.get_params<kernels::SoftmaxParams>(), c.in<int8_t>(0),
                          c.in<int32_t>(kernels::kSoftmaxExpTableSlot), c.out<int8_t>(0));
}

}  // namespace

extern const KernelEntry kernel_entry_softmax_s8_mve = kernel_check_softmax_s8_mve.with_eval(eval_softmax_s8_mve);

}  // namespace mcuflow::ops
