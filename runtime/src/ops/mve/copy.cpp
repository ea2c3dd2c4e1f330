// Device adapters for the mve cat slice and strided copy kernels (checks.h).
#include "checks.h"
#include "mcuflow/kernels/kernels_mve.h"

namespace mcuflow::ops {
namespace {

void eval_concat_slice_s8_mve(const OpCall& c) {
  const auto& p = c.get_params<kernels::ConcatSliceParams>();
  const int8_t* table = p.requantize != 0 ? c.in<int8_t>(kernels::kRequantizeTableSlot) : nullptr;
  kernels::concat_slice_s8_mve(p, c.in<int8_t>(0), table, c.out<int8_t>(0));
}
void eval_strided_copy_b8_mve(const OpCall& c) {
  kernels::strided_copy_b8_mve(c.get_params<kernels::StridedCopyParams>(), c.in<int8_t>(0), c.out<int8_t>(0));
}

}  // namespace

extern const KernelEntry kernel_entry_concat_slice_s8_mve =
    kernel_check_concat_slice_s8_mve.with_eval(eval_concat_slice_s8_mve);
extern const KernelEntry kernel_entry_strided_copy_b8_mve =
    kernel_check_strided_copy_b8_mve.with_eval(eval_strided_copy_b8_mve);

}  // namespace mcuflow::ops
