// Device adapters for the scalar (Armv6-M) add and mul kernels: checks.h lists their inputs and
// checks.
#include "checks.h"
#include "mcuflow/kernels/kernels_scalar.h"

namespace mcuflow::ops {
namespace {

void eval_add_s8_scalar(const OpCall& c) {
  kernels::add_s8_scalar(c.get_params<kernels::BinaryParams>(), c.in<int8_t>(0), c.in<int8_t>(1),
                         c.in<int32_t>(kernels::kAddTablesSlot), c.out<int8_t>(0));
}

void eval_mul_s8_scalar(const OpCall& c) {
  kernels::mul_s8_scalar(c.get_params<kernels::BinaryParams>(), c.in<int8_t>(0), c.in<int8_t>(1), c.out<int8_t>(0));
}

}  // namespace

extern const KernelEntry kernel_entry_add_s8_scalar = kernel_check_add_s8_scalar.with_eval(eval_add_s8_scalar);
extern const KernelEntry kernel_entry_mul_s8_scalar = kernel_check_mul_s8_scalar.with_eval(eval_mul_s8_scalar);

}  // namespace mcuflow::ops
