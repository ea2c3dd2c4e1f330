// Device adapters for the scalar (Armv6-M) clamp, requantize and table-lookup activation kernels: checks.h lists their
// inputs and checks.
#include "checks.h"
#include "mcuflow/kernels/kernels_scalar.h"

namespace mcuflow::ops {
namespace {

void eval_clamp_s8_scalar(const OpCall& c) {
  kernels::clamp_s8_scalar(c.get_params<kernels::ClampParams>(), c.in<int8_t>(0), c.out<int8_t>(0));
}

void eval_requantize_s8_scalar(const OpCall& c) {
  kernels::requantize_s8_scalar(c.get_params<kernels::RequantizeParams>(), c.in<int8_t>(0),
                                c.in<int8_t>(kernels::kRequantizeTableSlot), c.out<int8_t>(0));
}

void eval_lut_s8_scalar(const OpCall& c) {
  kernels::lut_s8_scalar(c.get_params<kernels::LutParams>(), c.in<int8_t>(0), c.in<int8_t>(1), c.out<int8_t>(0));
}

}  // namespace

extern const KernelEntry kernel_entry_clamp_s8_scalar = kernel_check_clamp_s8_scalar.with_eval(eval_clamp_s8_scalar);
extern const KernelEntry kernel_entry_requantize_s8_scalar =
    kernel_check_requantize_s8_scalar.with_eval(eval_requantize_s8_scalar);
extern const KernelEntry kernel_entry_lut_s8_scalar = kernel_check_lut_s8_scalar.with_eval(eval_lut_s8_scalar);

}  // namespace mcuflow::ops
