// Adapters for strided_copy_b8 / strided_copy_b32 (pad, slice, broadcast, upsample).
#include "check.h"
#include "mcuflow/kernels/kernels.h"

namespace mcuflow::ops {
namespace {

using kernels::StridedCopyParams;

// The kernel's source indices start + floor(o * num / den) stay far inside int32: it checks
// them against the input before reading, so any value that does not overflow is safe.
constexpr int64_t kMaxSourceIndex = int64_t{1} << 24;

Error check_strided_copy(const OpCheck& c, uint32_t element_bytes) {
  const auto& p = c.get_params<StridedCopyParams>();
  uint64_t in_n = 1, out_n = 1;
  for (uint32_t d = 0; d < kernels::kMaxRank; ++d) {
    if (!positive(p.in_dims[d]) || !positive(p.out_dims[d]) || !in_range(p.num[d], 0, kMaxExtent) ||
        !positive(p.den[d]) || !in_range(p.start[d], -kMaxExtent, kMaxExtent))
      return Error::kBadParams;
    if (int64_t(p.out_dims[d] - 1) * p.num[d] / p.den[d] > kMaxSourceIndex) return Error::kBadParams;
    in_n *= uint32_t(p.in_dims[d]);
    out_n *= uint32_t(p.out_dims[d]);
  }
  const format::TensorRecord& in = c.tensor(0);
  const format::TensorRecord& out = output(c);
  if (element_bytes == 1 && !in_range(p.fill, -128, 127)) return Error::kBadParams;
  return ok_if(copied_units(in, out, element_bytes, in_n, out_n));
}

Error check_b32(const OpCheck& c) { return check_strided_copy(c, 4); }

}  // namespace

Error check_strided_copy_b8(const OpCheck& c) { return check_strided_copy(c, 1); }

namespace {

void eval_b8(const OpCall& c) {
  kernels::strided_copy_b8(c.get_params<StridedCopyParams>(), c.in<int8_t>(0), c.out<int8_t>(0));
}
void eval_b32(const OpCall& c) {
  kernels::strided_copy_b32(c.get_params<StridedCopyParams>(), c.in<int32_t>(0), c.out<int32_t>(0));
}

}  // namespace

// Access order: the planner lays a one-block copy inside the tensor it copies from, at the place
// it copies: each element then lands where it is read from.
extern const KernelEntry kernel_entry_strided_copy_b8 = {sizeof(StridedCopyParams), 1, 1, check_strided_copy_b8, eval_b8,
                                                         aliasing::kOntoSource};
extern const KernelEntry kernel_entry_strided_copy_b32 = {sizeof(StridedCopyParams), 1, 1, check_b32, eval_b32,
                                                          aliasing::kOntoSource};

}  // namespace mcuflow::ops
