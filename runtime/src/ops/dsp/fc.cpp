// Adapter for the DSP fully connected kernel. Inputs: the reference's five (input, weights,
// bias, multipliers, shifts), then the row scratch (kernels_dsp.h).
#include "dsp_check.h"

namespace mcuflow::ops {
namespace {

using kernels::FcParams;

constexpr uint32_t kScratchSlot = 5;

Error check_fc_s8_dsp(const OpCheck& c) {
  if (const Error e = check_fc_s8(c); e != Error::kOk) return e;
  const auto& p = c.get_params<FcParams>();
  return ok_if(p.in_c >= 4 && p.in_c <= kernels::kDspMaxDepth && dsp::constant_inputs(c) &&
               dsp::scratch_fits(c, kScratchSlot, uint64_t(kernels::dsp_fc_scratch_bytes(p))));
}

void eval_fc_s8_dsp(const OpCall& c) {
  kernels::fc_s8_dsp(c.get_params<FcParams>(), c.in<int8_t>(0), c.in<int8_t>(1), c.in<int32_t>(2), c.in<int32_t>(3),
                     c.in<int32_t>(4), reinterpret_cast<int16_t*>(c.data[kScratchSlot]), c.out<int8_t>(0));
}

}  // namespace

extern const KernelEntry kernel_entry_fc_s8_dsp = {sizeof(FcParams), 6, 1, check_fc_s8_dsp, eval_fc_s8_dsp};

}  // namespace mcuflow::ops
