// Device adapter for the DSP fully connected kernel: checks.h lists its inputs and check.
#include "checks.h"
#include "mcuflow/kernels/kernels_dsp.h"

namespace mcuflow::ops {
namespace {

using kernels::FcParams;

void eval_fc_s8_dsp(const OpCall& c) {
  kernels::fc_s8_dsp(c.get_params<FcParams>(), c.in<int8_t>(0), c.in<int8_t>(1), c.in<int32_t>(2), c.in<int32_t>(3),
                     c.in<int32_t>(4), reinterpret_cast<int16_t*>(c.data[kernels::kDspFcScratchSlot]), c.out<int8_t>(0));
}

void eval_fc_s8_w4_dsp(const OpCall& c) {
  kernels::fc_s8_w4_dsp(c.get_params<FcParams>(), c.in<int8_t>(0), c.in<uint8_t>(1), c.in<int32_t>(2),
                        c.in<int32_t>(3), c.in<int32_t>(4), reinterpret_cast<int8_t*>(c.data[kernels::kDspW4ScratchSlot]),
                        c.out<int8_t>(0));
}

}  // namespace

extern const KernelEntry kernel_entry_fc_s8_dsp = kernel_check_fc_s8_dsp.with_eval(eval_fc_s8_dsp);
extern const KernelEntry kernel_entry_fc_s8_w4_dsp = kernel_check_fc_s8_w4_dsp.with_eval(eval_fc_s8_w4_dsp);

}  // namespace mcuflow::ops
