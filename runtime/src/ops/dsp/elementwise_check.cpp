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
  // The kernel's refusal (add_tables_fit) and the tables' comparison in one pass.
  const int32_t* tables = table_of<int32_t>(c, kernels::kAddTablesSlot, format::DType::kInt32, 2 * kByteValues);
  const load_profile::PreparedTableScope profiled;
  return ok_if(tables != nullptr && kernels::add_tables_fit(p, [&](int32_t input, int32_t byte, int64_t rescaled) {
                 return tables[input * kByteValues + byte] == kernels::add_table_value(p, rescaled);
               }));
}

Error check_mul_s8_dsp(const OpCheck& c) {
  if (const Error e = check_binary_s8(c); e != Error::kOk) return e;
  return ok_if(kernels::mul_s8_dsp_refusal(c.get_params<BinaryParams>()) == kernels::Refusal::kNone);
}

}  // namespace mcuflow::ops
