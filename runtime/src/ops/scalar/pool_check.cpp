// Check of the scalar (Armv6-M) average pooling kernel (checks.h): the reference's check, the
// kernel's refusal of the params (a window within the reciprocals' exact range), and the
// prepared reciprocals equal to their recomputation (kernels_scalar.h).
#include "checks.h"

namespace mcuflow::ops {

Error check_avgpool_s8_scalar(const OpCheck& c) {
  if (const Error e = check_pool_s8(c); e != Error::kOk) return e;
  const auto& p = c.get_params<kernels::PoolParams>();
  if (kernels::avgpool_s8_scalar_refusal(p) != kernels::Refusal::kNone) return Error::kBadParams;
  return ok_if(table_matches<int32_t>(c, kernels::kScalarPoolReciprocalSlot, format::DType::kInt32, p.k_h * p.k_w,
                                      [](int32_t i) { return kernels::scalar_pool_reciprocal(i + 1); }));
}

}  // namespace mcuflow::ops
