// Device adapter for the DSP sum / mean kernel reduce_s8_dsp (checks.h).
#include "checks.h"
#include "mcuflow/kernels/kernels_dsp.h"

namespace mcuflow::ops {
namespace {

void eval_reduce_s8_dsp(const OpCall& c) {
  kernels::reduce_s8_dsp(c.get_params<kernels::ReduceParams>(), c.in<int8_t>(0), c.out<int8_t>(0));
}

}  // namespace

extern const KernelEntry kernel_entry_reduce_s8_dsp = kernel_check_reduce_s8_dsp.with_eval(eval_reduce_s8_dsp);

}  // namespace mcuflow::ops
