// Check of the reduce tier kernels of every tier (checks.h; the scalar checks build for every
// core): the reference's check, then the kernels' refusal of a maximum (tier_contract.h).
#include "checks.h"

namespace mcuflow::ops {

Error check_reduce_sum_s8(const OpCheck& c) {
  if (const Error e = check_reduce_s8(c); e != Error::kOk) return e;
  return ok_if(kernels::reduce_sum_refusal(c.get_params<kernels::ReduceParams>()) == kernels::Refusal::kNone);
}

}  // namespace mcuflow::ops
