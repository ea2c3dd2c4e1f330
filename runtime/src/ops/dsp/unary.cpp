// Device adapters for the DSP clamp, requantize and table-lookup activation kernels (checks.h).
#include "checks.h"
#include "mcuflow/kernels/kernels_dsp.h"

namespace mcuflow::ops {
namespace {

void eval_clamp_s8_dsp(const OpCall& c) {
  kernels::clamp_s8_dsp(c.get_params<kernels::ClampParams>(), c.in<int8_t>(0), c.out<int8_t>(0));
}
void eval_requantize_s8_dsp(const OpCall& c) {
  kernels::requantize_s8_dsp(c.get_params<kernels::RequantizeParams>(), c.in<int8_t>(0),
                             c.in<int8_t>(kernels::kRequantizeTableSlot),
                             c.out<int8_t>(0));
}

void eval_lut_s8_dsp(const OpCall& c) {
  kernels::lut_s8_dsp(c.get_params<kernels::LutParams>(), c.in<int8_t>(0), c.in<int8_t>(1), c.out<int8_t>(0));
}

}  // namespace

extern const KernelEntry kernel_entry_clamp_s8_dsp = kernel_check_clamp_s8_dsp.with_eval(eval_clamp_s8_dsp);
extern const KernelEntry kernel_entry_requantize_s8_dsp =
    kernel_check_requantize_s8_dsp.with_eval(eval_requantize_s8_dsp);
extern const KernelEntry kernel_entry_lut_s8_dsp = kernel_check_lut_s8_dsp.with_eval(eval_lut_s8_dsp);

}  // namespace mcuflow::ops
