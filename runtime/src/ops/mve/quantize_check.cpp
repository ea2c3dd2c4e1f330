// Checks of the MVE quantize and dequantize kernels (checks.h): their reference's, and for the
// dequantization a normal scale.
#include "checks.h"
#include "mcuflow/kernels/kernels_mve.h"

namespace mcuflow::ops {

Error check_dequantize_s8_f32_mve(const OpCheck& c) {
  if (const Error e = check_dequantize(c); e != Error::kOk) return e;
  return ok_if(kernels::mve_dequantize_scale_supported(c.get_params<kernels::QuantizeParams>().scale));
}

}  // namespace mcuflow::ops
