// Check of the softmax kernels of every tier (checks.h): the exp table they read instead of
// evaluating exp must be exactly the one the reference's arithmetic gives for these params.
#include "../check.h"
#include "checks.h"
#include "mcuflow/kernels/softmax_table.h"

namespace mcuflow::ops {

Error check_softmax_s8_exp_table(const OpCheck& c) {
  if (const Error e = check_softmax_s8(c); e != Error::kOk) return e;
  const auto& p = c.get_params<kernels::SoftmaxParams>();
  const format::TensorRecord& t = c.tensor(softmax::kExpTableSlot);
  if (!tensor_is(c, softmax::kExpTableSlot, format::DType::kInt32, kernels::kSoftmaxTableEntries) || !read_only(t) ||
      t.offset % 4 != 0)
    return Error::kBadParams;
  const auto* table = reinterpret_cast<const int32_t*>(c.constants + t.offset);
  for (int32_t i = 0; i < kernels::kSoftmaxTableEntries; ++i) {
    if (table[i] != kernels::softmax_exp_table_entry(p, i)) return Error::kBadParams;
  }
  return Error::kOk;
}

}  // namespace mcuflow::ops
