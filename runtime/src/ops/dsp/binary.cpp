// Device adapters for the DSP add and mul kernels (checks in elementwise_check.cpp).
#include "checks.h"
#include "mcuflow/kernels/kernels_dsp.h"

namespace mcuflow::ops {
namespace {

using kernels::BinaryParams;

void eval_add_s8_dsp(const OpCall& c) {
  kernels::add_s8_dsp(c.get_params<BinaryParams>(), c.in<int8_t>(0), c.in<int8_t>(1), c.in<int32_t>(kernels::kAddTablesSlot),
                      c.out<int8_t>(0));
}
void eval_mul_s8_dsp(const OpCall& c) {
  kernels::mul_s8_dsp(c.get_params<BinaryParams>(), c.in<int8_t>(0), c.in<int8_t>(1), c.out<int8_t>(0));
}

}  // namespace

extern const KernelEntry kernel_entry_add_s8_dsp = kernel_check_add_s8_dsp.with_eval(eval_add_s8_dsp);
extern const KernelEntry kernel_entry_mul_s8_dsp = kernel_check_mul_s8_dsp.with_eval(eval_mul_s8_dsp);

}  // namespace mcuflow::ops
