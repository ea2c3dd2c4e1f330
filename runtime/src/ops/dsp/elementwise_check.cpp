// Checks of the element-wise DSP kernels (checks.h): the reference's check, the range on which
// the kernel's shortcut is exact (elementwise_tiers.h), and tables equal to their recomputation
// from the params.
#include "checks.h"
#include "mcuflow/kernels/elementwise_tiers.h"

namespace mcuflow::ops {
namespace {

using kernels::BinaryParams;
using kernels::kByteValues;

constexpr uint32_t kTableSlot = 2;  // add_s8_dsp's tables, after the two inputs

}  // namespace

Error check_add_s8_dsp(const OpCheck& c) {
  if (const Error e = check_binary_s8(c); e != Error::kOk) return e;
  const auto& p = c.get_params<BinaryParams>();
  return ok_if(kernels::add_tables_fit(p) &&
               table_matches<int32_t>(c, kTableSlot, format::DType::kInt32, 2 * kByteValues, [&p](int32_t i) {
                 return kernels::add_table_entry(p, i / kByteValues, i % kByteValues);
               }));
}

Error check_mul_s8_dsp(const OpCheck& c) {
  if (const Error e = check_binary_s8(c); e != Error::kOk) return e;
  return ok_if(kernels::mul_product_fits(c.get_params<BinaryParams>()));
}

}  // namespace mcuflow::ops
