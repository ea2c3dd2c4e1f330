// Checks of the MVE quantize and dequantize kernels (checks.h): their reference's, and for the
// dequantization a normal scale.
#include "checks.h"
#include "mcuflow/kernels/kernels_mve.h"

namespace mcuflow::ops {

Error check_dequantize_s8_f32_mve(const OpCheck& c) {
  if (const Error e = check_dequantize(c); e != Error::kOk) return e;
  return ok_if(kernels::dequantize_s8_f32_mve_refusal(c.get_params<kernels::QuantizeParams>()) == kernels::Refusal::kNone);
}

}  // namespace mcuflow::ops
