// Device adapters for the MVE int16 table activation and softmax kernels (checks.h).
#include "checks.h"
#include "mcuflow/kernels/kernels_mve.h"

namespace mcuflow::ops {
namespace {

void eval_lut_s16_mve(const OpCall& c) {
  kernels::lut_s16_mve(c.get_params<kernels::LutParams>(), c.in<int16_t>(0), c.in<int16_t>(1), c.out<int16_t>(0));
}

void eval_softmax_s16_mve(const OpCall& c) {
  kernels::softmax_s16_mve(c.get_params<kernels::SoftmaxS16Params>(), c.in<int16_t>(0), c.in<int16_t>(1),
                             c.out<int16_t>(0));
}

}  // namespace

extern const KernelEntry kernel_entry_lut_s16_mve = kernel_check_lut_s16_mve.with_eval(eval_lut_s16_mve);
extern const KernelEntry kernel_entry_softmax_s16_mve =
    kernel_check_softmax_s16_mve.with_eval(eval_softmax_s16_mve);

}  // namespace mcuflow::ops
