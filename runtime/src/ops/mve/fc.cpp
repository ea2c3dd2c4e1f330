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
  // Rows go through the scratch in pairs: a single row needs none.
  return ok_if(mve::prepared_input_valid(c, kernels::MveGemmLayout{p.in_c, p.out_c}, p.input_offset, p.per_channel == 1) &&
               (p.rows == 1 || mve::scratch_valid(c, uint64_t(kernels::mve_pair_bytes(p.in_c)))));
}

void eval_fc_s8_mve(const OpCall& c) {
  const auto& p = c.get_params<FcParams>();
  kernels::fc_s8_mve(p, c.in<int8_t>(0), c.in<int8_t>(1), c.in<uint8_t>(mve::kPreparedSlot),
                     p.rows == 1 ? nullptr : mve::scratch(c), c.out<int8_t>(0));
}

}  // namespace

extern const KernelEntry kernel_entry_fc_s8_mve = {sizeof(FcParams), 6, 1, check_fc_s8_mve, eval_fc_s8_mve};

}  // namespace mcuflow::ops
