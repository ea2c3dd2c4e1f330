// Device adapters for the MVE add and mul kernels: the inputs and check of add_s8 / mul_s8.
#include "checks.h"
#include "mcuflow/kernels/kernels_mve.h"

namespace mcuflow::ops {
namespace {

void eval_add_s8_mve(const OpCall& c) {
  kernels::add_s8_mve(c.get_params<kernels::BinaryParams>(), c.in<int8_t>(0), c.in<int8_t>(1), c.out<int8_t>(0));
}
void eval_mul_s8_mve(const OpCall& c) {
  kernels::mul_s8_mve(c.get_params<kernels::BinaryParams>(), c.in<int8_t>(0), c.in<int8_t>(1), c.out<int8_t>(0));
}

}  // namespace

extern const KernelEntry kernel_entry_add_s8_mve = kernel_check_add_s8_mve.with_eval(eval_add_s8_mve);
extern const KernelEntry kernel_entry_mul_s8_mve = kernel_check_mul_s8_mve.with_eval(eval_mul_s8_mve);

}  // namespace mcuflow::ops
