// Adapters for permute_b8 / permute_b32.
#include "check.h"
#include "mcuflow/kernels/kernels.h"

namespace mcuflow::ops {
namespace {

using format::DType;
using kernels::PermuteParams;

Error check_permute(const OpCheck& c, uint32_t element_bytes) {
  const auto& p = c.get_params<PermuteParams>();
  uint64_t n = 1;
  uint32_t seen = 0;
  for (uint32_t d = 0; d < kernels::kMaxRank; ++d) {
    if (!positive(p.in_dims[d]) || !in_range(p.perm[d], 0, int32_t(kernels::kMaxRank) - 1)) return Error::kBadParams;
    n *= uint32_t(p.in_dims[d]);
    if (n > UINT32_MAX) return Error::kBadParams;
    seen |= 1u << p.perm[d];
  }
  if (seen != (1u << kernels::kMaxRank) - 1) return Error::kBadParams;
  const format::TensorRecord& in = c.tensor(0);
  const format::TensorRecord& out = output(c);
  return ok_if(copied_units(in, out, element_bytes, n, n));
}

Error check_b32(const OpCheck& c) { return check_permute(c, 4); }

void eval_b8(const OpCall& c) { kernels::permute_b8(c.get_params<PermuteParams>(), c.in<int8_t>(0), c.out<int8_t>(0)); }
void eval_b32(const OpCall& c) {
  kernels::permute_b32(c.get_params<PermuteParams>(), c.in<int32_t>(0), c.out<int32_t>(0));
}

}  // namespace

// Every tier's permute_b8 takes this check (scalar/checks.h).
Error check_permute_b8(const OpCheck& c) { return check_permute(c, 1); }

extern const KernelEntry kernel_entry_permute_b8 = {sizeof(PermuteParams), 1, 1, check_permute_b8, eval_b8};
extern const KernelEntry kernel_entry_permute_b32 = {sizeof(PermuteParams), 1, 1, check_b32, eval_b32};

}  // namespace mcuflow::ops
