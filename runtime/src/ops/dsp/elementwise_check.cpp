// Checks of the element-wise DSP kernels (checks.h): the reference's check, the kernel's refusal
// of the params (the range on which its shortcut is exact, kernels_dsp.h), and tables equal to
// their recomputation from the params.
#include "checks.h"
#include "mcuflow/kernels/elementwise_tiers.h"

namespace mcuflow::ops {

using kernels::BinaryParams;
using kernels::kByteValues;

Error check_add_s8_dsp(const OpCheck& c) {
  if (const Error e = check_binary_s8(c); e != Error::kOk) return e;
  const auto& p = c.get_params<BinaryParams>();
  return ok_if(kernels::add_s8_dsp_refusal(p) == kernels::Refusal::kNone &&
               table_matches<int32_t>(c, kernels::kAddTablesSlot, format::DType::kInt32, 2 * kByteValues, [&p](int32_t i) {
                 return kernels::add_table_entry(p, i / kByteValues, i % kByteValues);
               }));
}

Error check_mul_s8_dsp(const OpCheck& c) {
  if (const Error e = check_binary_s8(c); e != Error::kOk) return e;
  return ok_if(kernels::mul_s8_dsp_refusal(c.get_params<BinaryParams>()) == kernels::Refusal::kNone);
}

}  // namespace mcuflow::ops
