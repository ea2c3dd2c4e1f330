// Adapter for layer_norm_f32 (float only: int8 programs run it between a dequantize and a
// quantize, as a fallback the compiler reports).
#include "check.h"
#include "mcuflow/kernels/kernels.h"

namespace mcuflow::ops {
namespace {

using format::DType;
using kernels::LayerNormParams;

Error check_layer_norm(const OpCheck& c) {
  const auto& p = c.get_params<LayerNormParams>();
  if (p.rows < 1 || !positive(p.depth) || !(p.eps > 0.0f)) return Error::kBadParams;
  const uint64_t n = uint64_t(p.rows) * p.depth;
  return ok_if(tensor_is(c, 0, DType::kFloat32, n) && tensor_is(c, 1, DType::kFloat32, uint64_t(p.depth)) &&
               tensor_is(c, 2, DType::kFloat32, uint64_t(p.depth)) && output_is(c, DType::kFloat32, n));
}

void eval_layer_norm(const OpCall& c) {
  kernels::layer_norm_f32(c.get_params<LayerNormParams>(), c.in<float>(0), c.in<float>(1), c.in<float>(2),
                          c.out<float>(0));
}

}  // namespace

extern const KernelEntry kernel_entry_layer_norm_f32 = {sizeof(LayerNormParams), 3, 1, check_layer_norm,
                                                        eval_layer_norm};

}  // namespace mcuflow::ops
