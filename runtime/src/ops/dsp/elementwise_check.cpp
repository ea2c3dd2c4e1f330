// Checks of the element-wise DSP kernels (checks.h) and of the requantize table both tiers
// read: the reference's check, the range on which the kernel's shortcut is exact
// (elementwise_tiers.h), and tables equal to their recomputation from the params.
#include "checks.h"
#include "mcuflow/kernels/elementwise_tiers.h"

namespace mcuflow::ops {
namespace {

using kernels::BinaryParams;
using kernels::kByteValues;

constexpr uint32_t kTableSlot = 2;  // add_s8_dsp's tables, after the two inputs

// The constant at `slot` holds `count` elements of type T (dtype `dtype`), aligned for T, each
// equal to entry(i).
template <typename T, typename Entry>
bool table_matches(const OpCheck& c, uint32_t slot, format::DType dtype, int32_t count, Entry entry) {
  const format::TensorRecord& t = c.tensor(slot);
  if (!tensor_is(c, slot, dtype, uint64_t(count)) || !read_only(t) || t.offset % sizeof(T) != 0) return false;
  const T* table = reinterpret_cast<const T*>(c.constants + t.offset);
  for (int32_t i = 0; i < count; ++i) {
    if (table[i] != entry(i)) return false;
  }
  return true;
}

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

Error check_requantize_s8_table(const OpCheck& c) {
  if (const Error e = check_requantize_s8(c); e != Error::kOk) return e;
  const auto& p = c.get_params<kernels::RequantizeParams>();
  return ok_if(table_matches<int8_t>(c, 1, format::DType::kInt8, kByteValues,
                                     [&p](int32_t i) { return kernels::requantize_table_entry(p, i); }));
}

}  // namespace mcuflow::ops
