// Check of the softmax kernels of every tier (checks.h): the exp table they read instead of
// evaluating exp must be exactly the one the reference's arithmetic gives for these params.
#include "../check.h"
#include "checks.h"
#include "mcuflow/kernels/softmax_table.h"

namespace mcuflow::ops {

Error check_softmax_s8_exp_table(const OpCheck& c) {
  if (const Error e = check_softmax_s8(c); e != Error::kOk) return e;
  const auto& p = c.get_params<kernels::SoftmaxParams>();
  return ok_if(table_matches<int32_t>(c, kernels::kSoftmaxExpTableSlot, format::DType::kInt32,
                                      kernels::kSoftmaxTableEntries,
                                      [&p](int32_t i) { return kernels::softmax_exp_table_entry(p, i); }));
}

}  // namespace mcuflow::ops
