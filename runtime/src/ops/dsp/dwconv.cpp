// Device adapters for the DSP depthwise convs: checks.h lists their inputs and checks.
#include "checks.h"
#include "mcuflow/kernels/kernels_dsp.h"

namespace mcuflow::ops {
namespace {

using kernels::DwConvParams;

void eval_dwconv_s8_dsp(const OpCall& c) {
  kernels::dwconv_s8_dsp(c.get_params<DwConvParams>(), c.in<int8_t>(0), c.in<int32_t>(kernels::kDspDwPreparedSlot),
                         c.in<int32_t>(2), c.in<int32_t>(3), c.in<int32_t>(4), c.out<int8_t>(0));
}

void eval_dwconv_s8_3x3_dsp(const OpCall& c) {
  kernels::dwconv_s8_3x3_dsp(c.get_params<DwConvParams>(), c.in<int8_t>(0), c.in<int32_t>(kernels::kDspDwPreparedSlot),
                             c.in<int32_t>(2), c.in<int32_t>(3), c.in<int32_t>(4),
                             reinterpret_cast<int16_t*>(c.data[kernels::kDspDw3ScratchSlot]), c.out<int8_t>(0));
}

void eval_dwconv_s8_w4_dsp(const OpCall& c) {
  kernels::dwconv_s8_w4_dsp(c.get_params<DwConvParams>(), c.in<int8_t>(0), c.in<uint8_t>(1), c.in<int32_t>(2),
                            c.in<int32_t>(3), c.in<int32_t>(4), reinterpret_cast<int8_t*>(c.data[kernels::kDspW4ScratchSlot]),
                            c.out<int8_t>(0));
}

}  // namespace

extern const KernelEntry kernel_entry_dwconv_s8_dsp = kernel_check_dwconv_s8_dsp.with_eval(eval_dwconv_s8_dsp);
extern const KernelEntry kernel_entry_dwconv_s8_w4_dsp = kernel_check_dwconv_s8_w4_dsp.with_eval(eval_dwconv_s8_w4_dsp);
extern const KernelEntry kernel_entry_dwconv_s8_3x3_dsp =
    kernel_check_dwconv_s8_3x3_dsp.with_eval(eval_dwconv_s8_3x3_dsp);

}  // namespace mcuflow::ops
