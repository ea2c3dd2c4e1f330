// Checks of the scalar element-wise kernels that read a prepared table (checks.h): their
// reference's check, then the table, which must equal its recomputation from the params.
#include "check_helpers.h"
#include "mcuflow/kernels/kernels_scalar.h"

namespace mcuflow::ops {

Error check_add_s8_scalar(const OpCheck& c) {
  if (const Error e = check_binary_s8(c); e != Error::kOk) return e;
  const auto& p = c.get_params<kernels::BinaryParams>();
  return ok_if(table_matches<int32_t>(c, kernels::kAddTablesSlot, format::DType::kInt32, kernels::kScalarAddTableWords,
                                      [&p](int32_t i) { return kernels::scalar_add_table_word(p, i); }));
}

Error check_requantize_s8_scalar(const OpCheck& c) {
  if (const Error e = check_requantize_s8(c); e != Error::kOk) return e;
  const auto& p = c.get_params<kernels::RequantizeParams>();
  return ok_if(table_matches<int8_t>(c, kernels::kRequantizeTableSlot, format::DType::kInt8, kernels::kByteValues,
                                     [&p](int32_t i) { return kernels::requantize_table_entry(p, i); }));
}

Error check_dequantize_s8_f32_scalar(const OpCheck& c) {
  if (const Error e = check_dequantize(c); e != Error::kOk) return e;
  const auto& p = c.get_params<kernels::QuantizeParams>();
  return ok_if(table_matches<uint32_t>(c, kernels::kDequantizeTableSlot, format::DType::kFloat32, kernels::kByteValues,
                                       [&p](int32_t i) { return kernels::dequantize_table_entry(p, i); }));
}

}  // namespace mcuflow::ops
