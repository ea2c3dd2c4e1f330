// Check of the cat slice kernels of every tier (checks.h): the reference's, then the table, present
// exactly when the slice requantizes and equal to its recomputation from the params.
#include "check_helpers.h"
#include "mcuflow/kernels/kernels_scalar.h"

namespace mcuflow::ops {

Error check_concat_slice_s8_scalar(const OpCheck& c) {
  if (const Error e = check_concat_slice_s8(c); e != Error::kOk) return e;
  const auto& p = c.get_params<kernels::ConcatSliceParams>();
  if (p.requantize == 0) return ok_if(c.op->input_count == 1);
  return ok_if(c.op->input_count == kernels::kRequantizeTableSlot + 1 &&
               table_matches<int8_t>(c, kernels::kRequantizeTableSlot, format::DType::kInt8, kernels::kByteValues,
                                     [&p](int32_t i) { return kernels::concat_requantize_table_entry(p, i); }));
}

}  // namespace mcuflow::ops
