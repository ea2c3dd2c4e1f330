// Adapters for conv_s8 / conv_f32 and dwconv_s8 / dwconv_f32.
#include "check.h"
#include "mcuflow/kernels/kernels.h"

namespace mcuflow::ops {
namespace {

using format::DType;
using kernels::ConvParams;
using kernels::DwConvParams;

template <typename P>
bool int8_fields_valid(const P& p) {
  return input_offset_valid(p.input_offset) && output_stage_valid(p.out, DType::kInt8);
}

Error check_conv(const OpCheck& c, DType act, DType bias) {
  const auto& p = c.get_params<ConvParams>();
  if (!window_valid(p) || !positive(p.groups) || p.in_c % p.groups != 0 || p.out_c % p.groups != 0)
    return Error::kBadParams;
  const uint64_t in = uint64_t(p.in_h) * p.in_w * p.in_c, out = uint64_t(p.out_h) * p.out_w * p.out_c;
  const uint64_t window = uint64_t(p.k_h) * p.k_w * (p.in_c / p.groups);  // weights per output channel
  if (!tensor_is(c, 0, act, in) || !tensor_is(c, 1, act, p.out_c * window) || !tensor_is(c, 2, bias, p.out_c))
    return Error::kBadParams;
  if (act == DType::kInt8) {
    return ok_if(int8_fields_valid(p) && requant_tables_valid(c, 3, 4, p.out_c) && output_is(c, act, out) &&
                 bias_fits_accumulator(c, 2, p.out_c, window));
  }
  return ok_if(output_is(c, act, out));
}

Error check_dwconv(const OpCheck& c, DType act, DType bias) {
  const auto& p = c.get_params<DwConvParams>();
  if (!window_valid(p) || !positive(p.ch_mult) || uint64_t(p.in_c) * p.ch_mult != uint64_t(p.out_c))
    return Error::kBadParams;
  const uint64_t in = uint64_t(p.in_h) * p.in_w * p.in_c, out = uint64_t(p.out_h) * p.out_w * p.out_c;
  const uint64_t w = uint64_t(p.k_h) * p.k_w * p.out_c;
  if (!tensor_is(c, 0, act, in) || !tensor_is(c, 1, act, w) || !tensor_is(c, 2, bias, p.out_c)) return Error::kBadParams;
  if (act == DType::kInt8) {
    return ok_if(int8_fields_valid(p) && requant_tables_valid(c, 3, 4, p.out_c) && output_is(c, act, out) &&
                 bias_fits_accumulator(c, 2, p.out_c, uint64_t(p.k_h) * p.k_w));
  }
  return ok_if(output_is(c, act, out));
}

}  // namespace

Error check_conv_s8(const OpCheck& c) { return check_conv(c, DType::kInt8, DType::kInt32); }
Error check_conv_f32(const OpCheck& c) { return check_conv(c, DType::kFloat32, DType::kFloat32); }
Error check_dwconv_s8(const OpCheck& c) { return check_dwconv(c, DType::kInt8, DType::kInt32); }
Error check_dwconv_f32(const OpCheck& c) { return check_dwconv(c, DType::kFloat32, DType::kFloat32); }

namespace {

void eval_conv_s8(const OpCall& c) {
  kernels::conv_s8(c.get_params<ConvParams>(), c.in<int8_t>(0), c.in<int8_t>(1), c.in<int32_t>(2),
                   c.in<int32_t>(3), c.in<int32_t>(4), c.out<int8_t>(0));
}
void eval_conv_f32(const OpCall& c) {
  kernels::conv_f32(c.get_params<ConvParams>(), c.in<float>(0), c.in<float>(1), c.in<float>(2), c.out<float>(0));
}
void eval_dwconv_s8(const OpCall& c) {
  kernels::dwconv_s8(c.get_params<DwConvParams>(), c.in<int8_t>(0), c.in<int8_t>(1), c.in<int32_t>(2),
                     c.in<int32_t>(3), c.in<int32_t>(4), c.out<int8_t>(0));
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

}  // namespace mcuflow::ops
