// Adapters for the unary element-wise kernels: clamp, requantize, quantize, dequantize (int8,
// and int16 where the precision of neighbouring layers differs or at the program's I/O).
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

// The input offset is a negated zero point of `in`.
Error check_requantize(const OpCheck& c, DType in, DType out) {
  const auto& p = c.get_params<RequantizeParams>();
  return ok_if(unary_shapes(c, p.n, in, out) &&
               in_range(p.input_offset, -format::dtype_max(in), -format::dtype_min(in)) &&
               format::zero_point_valid(out, p.output_offset) && p.multiplier >= 0 && in_range(p.shift, -31, 30) &&
               activation_range_valid(p.act_min, p.act_max, out));
}

// float32 <-> `quantized` (the type of the quantized side).
Error check_conversion(const OpCheck& c, DType in, DType out, DType quantized) {
  const auto& p = c.get_params<QuantizeParams>();
  return ok_if(unary_shapes(c, p.n, in, out) && p.scale > 0.0f && format::zero_point_valid(quantized, p.zero_point));
}

}  // namespace

// Shared with the tier kernels of clamp and requantize (check.h).
Error check_clamp_s8(const OpCheck& c) {
  const auto& p = c.get_params<ClampParams>();
  return ok_if(unary_shapes(c, p.n, DType::kInt8, DType::kInt8) && int8_activation_range(p.act_min, p.act_max));
}
Error check_requantize_s8(const OpCheck& c) { return check_requantize(c, DType::kInt8, DType::kInt8); }

namespace {

Error check_clamp_f32(const OpCheck& c) {
  const auto& p = c.get_params<ClampParams>();
  return ok_if(unary_shapes(c, p.n, DType::kFloat32, DType::kFloat32));
}

}  // namespace

// Shared with the MVE quantize and dequantize kernels (check.h).
Error check_quantize(const OpCheck& c) { return check_conversion(c, DType::kFloat32, DType::kInt8, DType::kInt8); }
Error check_dequantize(const OpCheck& c) { return check_conversion(c, DType::kInt8, DType::kFloat32, DType::kInt8); }

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

Error check_quantize_s16(const OpCheck& c) { return check_conversion(c, DType::kFloat32, DType::kInt16, DType::kInt16); }
Error check_dequantize_s16(const OpCheck& c) { return check_conversion(c, DType::kInt16, DType::kFloat32, DType::kInt16); }
Error check_requantize_s8_s16(const OpCheck& c) { return check_requantize(c, DType::kInt8, DType::kInt16); }
Error check_requantize_s16_s8(const OpCheck& c) { return check_requantize(c, DType::kInt16, DType::kInt8); }

void eval_quantize_s16(const OpCall& c) {
  kernels::quantize_f32_s16(c.get_params<QuantizeParams>(), c.in<float>(0), c.out<int16_t>(0));
}
void eval_dequantize_s16(const OpCall& c) {
  kernels::dequantize_s16_f32(c.get_params<QuantizeParams>(), c.in<int16_t>(0), c.out<float>(0));
}
void eval_requantize_s8_s16(const OpCall& c) {
  kernels::requantize_s8_s16(c.get_params<RequantizeParams>(), c.in<int8_t>(0), c.out<int16_t>(0));
}
void eval_requantize_s16_s8(const OpCall& c) {
  kernels::requantize_s16_s8(c.get_params<RequantizeParams>(), c.in<int16_t>(0), c.out<int8_t>(0));
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
// The int16 kernels have no access contract yet: never run in place.
extern const KernelEntry kernel_entry_quantize_f32_s16 = {sizeof(QuantizeParams), 1, 1, check_quantize_s16, eval_quantize_s16};
extern const KernelEntry kernel_entry_dequantize_s16_f32 = {sizeof(QuantizeParams), 1, 1, check_dequantize_s16,
                                                            eval_dequantize_s16};
extern const KernelEntry kernel_entry_requantize_s8_s16 = {sizeof(RequantizeParams), 1, 1, check_requantize_s8_s16,
                                                           eval_requantize_s8_s16};
extern const KernelEntry kernel_entry_requantize_s16_s8 = {sizeof(RequantizeParams), 1, 1, check_requantize_s16_s8,
                                                           eval_requantize_s16_s8};


}  // namespace mcuflow::ops
