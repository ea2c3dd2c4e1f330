// Adapters for the unary element-wise kernels: clamp, requantize, quantize, dequantize.
#include "check.h"
#include "mcuflow/kernels/kernels.h"

namespace mcuflow::ops {
namespace {

using format::DType;
using kernels::ClampParams;
using kernels::QuantizeParams;
using kernels::RequantizeParams;

bool unary_shapes(const OpCheck& c, int32_t n, DType in, DType out) {
  return n >= 1 && tensor_is(c, 0, in, uint64_t(n)) && output_is(c, out, uint64_t(n));
}

}  // namespace

// Shared with the tier kernels of clamp and requantize (check.h).
Error check_clamp_s8(const OpCheck& c) {
  const auto& p = c.get_params<ClampParams>();
  return ok_if(unary_shapes(c, p.n, DType::kInt8, DType::kInt8) && int8_activation_range(p.act_min, p.act_max));
}
Error check_requantize_s8(const OpCheck& c) {
  const auto& p = c.get_params<RequantizeParams>();
  return ok_if(unary_shapes(c, p.n, DType::kInt8, DType::kInt8) && zero_point_offsets(p.input_offset, p.output_offset) &&
               p.multiplier >= 0 && in_range(p.shift, -31, 30) && int8_activation_range(p.act_min, p.act_max));
}

namespace {

Error check_clamp_f32(const OpCheck& c) {
  const auto& p = c.get_params<ClampParams>();
  return ok_if(unary_shapes(c, p.n, DType::kFloat32, DType::kFloat32));
}

}  // namespace

// Shared with the MVE quantize and dequantize kernels (check.h).
Error check_quantize(const OpCheck& c) {
  const auto& p = c.get_params<QuantizeParams>();
  return ok_if(unary_shapes(c, p.n, DType::kFloat32, DType::kInt8) && p.scale > 0.0f && in_range(p.zero_point, -128, 127));
}
Error check_dequantize(const OpCheck& c) {
  const auto& p = c.get_params<QuantizeParams>();
  return ok_if(unary_shapes(c, p.n, DType::kInt8, DType::kFloat32) && p.scale > 0.0f && in_range(p.zero_point, -128, 127));
}

namespace {

void eval_clamp_s8(const OpCall& c) { kernels::clamp_s8(c.get_params<ClampParams>(), c.in<int8_t>(0), c.out<int8_t>(0)); }
void eval_clamp_f32(const OpCall& c) { kernels::clamp_f32(c.get_params<ClampParams>(), c.in<float>(0), c.out<float>(0)); }
void eval_requantize_s8(const OpCall& c) {
  kernels::requantize_s8(c.get_params<RequantizeParams>(), c.in<int8_t>(0), c.out<int8_t>(0));
}
void eval_quantize(const OpCall& c) {
  kernels::quantize_f32_s8(c.get_params<QuantizeParams>(), c.in<float>(0), c.out<int8_t>(0));
}
void eval_dequantize(const OpCall& c) {
  kernels::dequantize_s8_f32(c.get_params<QuantizeParams>(), c.in<int8_t>(0), c.out<float>(0));
}

}  // namespace

// Access order: element i read before it is written, in increasing i (quantize and dequantize
// change the element size: aliasing::elementwise_shift).
extern const KernelEntry kernel_entry_clamp_s8 = {sizeof(ClampParams), 1, 1, check_clamp_s8, eval_clamp_s8,
                                                  aliasing::kElementwise};
extern const KernelEntry kernel_entry_clamp_f32 = {sizeof(ClampParams), 1, 1, check_clamp_f32, eval_clamp_f32,
                                                   aliasing::kElementwise};
extern const KernelEntry kernel_entry_requantize_s8 = {sizeof(RequantizeParams), 1, 1, check_requantize_s8,
                                                       eval_requantize_s8, aliasing::kElementwise};
extern const KernelEntry kernel_entry_quantize_f32_s8 = {sizeof(QuantizeParams), 1, 1, check_quantize, eval_quantize,
                                                         aliasing::kElementwise};
extern const KernelEntry kernel_entry_dequantize_s8_f32 = {sizeof(QuantizeParams), 1, 1, check_dequantize,
                                                           eval_dequantize, aliasing::kElementwise};

}  // namespace mcuflow::ops
