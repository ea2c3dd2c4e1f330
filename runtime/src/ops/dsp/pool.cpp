// Device adapters for the DSP pooling kernels avgpool_s8_dsp and maxpool_s8_dsp: the input and
// check of their references.
#include "checks.h"
#include "mcuflow/kernels/kernels_dsp.h"

namespace mcuflow::ops {
namespace {

void eval_avgpool_s8_dsp(const OpCall& c) {
  kernels::avgpool_s8_dsp(c.get_params<kernels::PoolParams>(), c.in<int8_t>(0), c.out<int8_t>(0));
}

void eval_maxpool_s8_dsp(const OpCall& c) {
  kernels::maxpool_s8_dsp(c.get_params<kernels::PoolParams>(), c.in<int8_t>(0), c.out<int8_t>(0));
}

}  // namespace

extern const KernelEntry kernel_entry_avgpool_s8_dsp = kernel_check_avgpool_s8_dsp.with_eval(eval_avgpool_s8_dsp);
extern const KernelEntry kernel_entry_maxpool_s8_dsp = kernel_check_maxpool_s8_dsp.with_eval(eval_maxpool_s8_dsp);

}  // namespace mcuflow::ops
