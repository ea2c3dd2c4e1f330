// Check of the scalar (Armv6-M) average pooling kernel (checks.h): the reference's check, a
// window within the reciprocals' exact range, and the prepared reciprocals equal to their
// recomputation (kernels_scalar.h).
#include "check_helpers.h"
#include "mcuflow/kernels/kernels_scalar.h"

namespace mcuflow::ops {

Error check_avgpool_s8_scalar(const OpCheck& c) {
  if (const Error e = check_pool_s8(c); e != Error::kOk) return e;
  const auto& p = c.get_params<kernels::PoolParams>();
  const int64_t taps = int64_t(p.k_h) * p.k_w;
  if (taps > kernels::kScalarPoolMaxCount) return Error::kBadParams;
  const format::TensorRecord& t = c.tensor(scalar::kPoolReciprocalSlot);
  if (!tensor_is(c, scalar::kPoolReciprocalSlot, format::DType::kInt32, uint64_t(taps)) || !read_only(t) ||
      t.offset % 4 != 0)
    return Error::kBadParams;
  const auto* reciprocals = scalar::constant_data<int32_t>(c, scalar::kPoolReciprocalSlot);
  for (int32_t n = 1; n <= int32_t(taps); ++n) {
    if (reciprocals[n - 1] != kernels::scalar_pool_reciprocal(n)) return Error::kBadParams;
  }
  return Error::kOk;
}

}  // namespace mcuflow::ops
