// Adapters for conv_s8 / conv_s16 / conv_s8_w4 / conv_f32 and dwconv_s8 / dwconv_s16 / dwconv_s8_w4 /
// dwconv_f32.
#include "check.h"
#include "mcuflow/kernels/kernels.h"

namespace mcuflow::ops {
namespace {

using format::DType;
using kernels::ConvParams;
using kernels::DwConvParams;

// Activations `act`, weights `weight`, bias `bias` (float32: all three float32); the input in
// slot 0 has `input_elements` elements (0: the window's, in_h * in_w * in_c).
Error check_conv(const OpCheck& c, DType act, DType weight, DType bias, uint64_t input_elements = 0) {
  const auto& p = c.get_params<ConvParams>();
  if (!window_valid(p) || !positive(p.groups) || p.in_c % p.groups != 0 || p.out_c % p.groups != 0)
    return Error::kBadParams;
  const uint64_t out = uint64_t(p.out_h) * p.out_w * p.out_c;
  const uint64_t in = input_elements != 0 ? input_elements : uint64_t(p.in_h) * p.in_w * p.in_c;
  const uint64_t window = uint64_t(p.k_h) * p.k_w * (p.in_c / p.groups);  // weights per output channel
  if (!tensor_is(c, 0, act, in) || !tensor_is(c, 1, weight, p.out_c * window) || !tensor_is(c, 2, bias, p.out_c) ||
      !output_is(c, act, out))
    return Error::kBadParams;
  return ok_if(act == DType::kFloat32 || weighted_quantization_valid(c, act, p.input_offset, p.out, p.out_c, p.out_c, window));
}

Error check_dwconv(const OpCheck& c, DType act, DType weight, DType bias, uint64_t input_elements = 0) {
  const auto& p = c.get_params<DwConvParams>();
  if (!window_valid(p) || !positive(p.ch_mult) || uint64_t(p.in_c) * p.ch_mult != uint64_t(p.out_c))
    return Error::kBadParams;
  const uint64_t out = uint64_t(p.out_h) * p.out_w * p.out_c;
  const uint64_t in = input_elements != 0 ? input_elements : uint64_t(p.in_h) * p.in_w * p.in_c;
  const uint64_t w = uint64_t(p.k_h) * p.k_w * p.out_c;
  if (!tensor_is(c, 0, act, in) || !tensor_is(c, 1, weight, w) || !tensor_is(c, 2, bias, p.out_c) ||
      !output_is(c, act, out))
    return Error::kBadParams;
  return ok_if(act == DType::kFloat32 ||
               weighted_quantization_valid(c, act, p.input_offset, p.out, p.out_c, p.out_c, uint64_t(p.k_h) * p.k_w));
}

}  // namespace

Error check_conv_s8(const OpCheck& c) { return check_conv(c, DType::kInt8, DType::kInt8, DType::kInt32); }
Error check_conv_f32(const OpCheck& c) { return check_conv(c, DType::kFloat32, DType::kFloat32, DType::kFloat32); }
Error check_dwconv_s8(const OpCheck& c) { return check_dwconv(c, DType::kInt8, DType::kInt8, DType::kInt32); }
Error check_dwconv_f32(const OpCheck& c) { return check_dwconv(c, DType::kFloat32, DType::kFloat32, DType::kFloat32); }
Error check_conv_input(const OpCheck& c, bool quantized, uint64_t input_elements) {
  return quantized ? check_conv(c, DType::kInt8, DType::kInt8, DType::kInt32, input_elements)
                   : check_conv(c, DType::kFloat32, DType::kFloat32, DType::kFloat32, input_elements);
}
Error check_dwconv_input(const OpCheck& c, bool quantized, uint64_t input_elements) {
  return quantized ? check_dwconv(c, DType::kInt8, DType::kInt8, DType::kInt32, input_elements)
                   : check_dwconv(c, DType::kFloat32, DType::kFloat32, DType::kFloat32, input_elements);
}

Error check_conv_s16(const OpCheck& c) { return check_conv(c, DType::kInt16, DType::kInt8, DType::kInt64); }
Error check_dwconv_s16(const OpCheck& c) { return check_dwconv(c, DType::kInt16, DType::kInt8, DType::kInt64); }
Error check_conv_s8_w4(const OpCheck& c) { return check_conv(c, DType::kInt8, DType::kInt4, DType::kInt32); }
Error check_dwconv_s8_w4(const OpCheck& c) { return check_dwconv(c, DType::kInt8, DType::kInt4, DType::kInt32); }

namespace {

void eval_conv_s8(const OpCall& c) {
  kernels::conv_s8(c.get_params<ConvParams>(), c.in<int8_t>(0), c.in<int8_t>(1), c.in<int32_t>(2),
                   c.in<int32_t>(3), c.in<int32_t>(4), c.out<int8_t>(0));
}
void eval_conv_s16(const OpCall& c) {
  kernels::conv_s16(c.get_params<ConvParams>(), c.in<int16_t>(0), c.in<int8_t>(1), c.in<int64_t>(2),
                    c.in<int32_t>(3), c.in<int32_t>(4), c.out<int16_t>(0));
}
void eval_conv_s8_w4(const OpCall& c) {
  kernels::conv_s8_w4(c.get_params<ConvParams>(), c.in<int8_t>(0), c.in<uint8_t>(1), c.in<int32_t>(2),
                      c.in<int32_t>(3), c.in<int32_t>(4), c.out<int8_t>(0));
}
void eval_dwconv_s8_w4(const OpCall& c) {
  kernels::dwconv_s8_w4(c.get_params<DwConvParams>(), c.in<int8_t>(0), c.in<uint8_t>(1), c.in<int32_t>(2),
                        c.in<int32_t>(3), c.in<int32_t>(4), c.out<int8_t>(0));
}
void eval_conv_f32(const OpCall& c) {
  kernels::conv_f32(c.get_params<ConvParams>(), c.in<float>(0), c.in<float>(1), c.in<float>(2), c.out<float>(0));
}
void eval_dwconv_s8(const OpCall& c) {
  kernels::dwconv_s8(c.get_params<DwConvParams>(), c.in<int8_t>(0), c.in<int8_t>(1), c.in<int32_t>(2),
                     c.in<int32_t>(3), c.in<int32_t>(4), c.out<int8_t>(0));
}
void eval_dwconv_s16(const OpCall& c) {
  kernels::dwconv_s16(c.get_params<DwConvParams>(), c.in<int16_t>(0), c.in<int8_t>(1), c.in<int64_t>(2),
                      c.in<int32_t>(3), c.in<int32_t>(4), c.out<int16_t>(0));
}
void eval_dwconv_f32(const OpCall& c) {
  kernels::dwconv_f32(c.get_params<DwConvParams>(), c.in<float>(0), c.in<float>(1), c.in<float>(2), c.out<float>(0));
}

}  // namespace

// Access order: output pixels in raster order, the int8 kernels backwards when their output starts
// above their input (kernels/reference/raster_order.h), the float ones forwards only.
extern const KernelEntry kernel_entry_conv_s8 = {sizeof(ConvParams), 5, 1, check_conv_s8, eval_conv_s8,
                                                 aliasing::kConvBothWays};
extern const KernelEntry kernel_entry_conv_f32 = {sizeof(ConvParams), 3, 1, check_conv_f32, eval_conv_f32,
                                                  aliasing::kConvForward};
extern const KernelEntry kernel_entry_dwconv_s8 = {sizeof(DwConvParams), 5, 1, check_dwconv_s8, eval_dwconv_s8,
                                                   aliasing::kDwConvBothWays};
extern const KernelEntry kernel_entry_dwconv_f32 = {sizeof(DwConvParams), 3, 1, check_dwconv_f32, eval_dwconv_f32,
                                                    aliasing::kDwConvForward};
// The int4-weight kernels walk like the int8 ones (window.h weighted_window, raster_order.h).
extern const KernelEntry kernel_entry_conv_s8_w4 = {sizeof(ConvParams), 5, 1, check_conv_s8_w4, eval_conv_s8_w4,
                                                    aliasing::kConvBothWays};
extern const KernelEntry kernel_entry_dwconv_s8_w4 = {sizeof(DwConvParams), 5, 1, check_dwconv_s8_w4,
                                                      eval_dwconv_s8_w4, aliasing::kDwConvBothWays};
// The int16 kernels have no access contract yet: never run in place.
extern const KernelEntry kernel_entry_conv_s16 = {sizeof(ConvParams), 5, 1, check_conv_s16, eval_conv_s16};
extern const KernelEntry kernel_entry_dwconv_s16 = {sizeof(DwConvParams), 5, 1, check_dwconv_s16, eval_dwconv_s16};

}  // namespace mcuflow::ops
