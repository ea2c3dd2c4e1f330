// Adapter for the MVE fully connected kernel fc_s8_mve.
#include "prepared_inputs.h"
#include "mcuflow/kernels/kernels_mve.h"

namespace mcuflow::ops {
namespace {

using kernels::FcParams;

Error check_fc_s8_mve(const OpCheck& c) {
  const Error e = check_fc_s8(c);
  if (e != Error::kOk) return e;
  const auto& p = c.get_params<FcParams>();
  return ok_if(mve::prepared_input_valid(c, kernels::MveGemmLayout{p.in_c, p.out_c}, p.input_offset, p.per_channel == 1));
}

void eval_fc_s8_mve(const OpCall& c) {
  kernels::fc_s8_mve(c.get_params<FcParams>(), c.in<int8_t>(0), c.in<uint8_t>(mve::kPreparedSlot),
                     c.out<int8_t>(0));
}

}  // namespace

extern const KernelEntry kernel_entry_fc_s8_mve = {sizeof(FcParams), 6, 1, check_fc_s8_mve, eval_fc_s8_mve};

}  // namespace mcuflow::ops
