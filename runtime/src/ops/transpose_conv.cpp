// Adapters for transpose_conv_s8 / transpose_conv_f32.
#include "check.h"
#include "mcuflow/kernels/kernels.h"

namespace mcuflow::ops {
namespace {

using format::DType;
using kernels::ConvParams;

Error check_transpose_conv(const OpCheck& c, DType act, DType bias) {
  const auto& p = c.get_params<ConvParams>();
  if (!window_valid(p) || p.groups != 1) return Error::kBadParams;
  const uint64_t in = uint64_t(p.in_h) * p.in_w * p.in_c, out = uint64_t(p.out_h) * p.out_w * p.out_c;
  const uint64_t w = uint64_t(p.out_c) * p.k_h * p.k_w * p.in_c;
  if (!tensor_is(c, 0, act, in) || !tensor_is(c, 1, act, w) || !tensor_is(c, 2, bias, p.out_c) ||
      !output_is(c, act, out))
    return Error::kBadParams;
  if (act == DType::kFloat32) return Error::kOk;
  return ok_if(input_offset_valid(p.input_offset) && output_stage_valid(p.out, DType::kInt8) &&
               requant_tables_valid(c, 3, 4, p.out_c) &&
               // every output sums at most in_c * k_h * k_w products, plus its bias
               bias_fits_accumulator(c, 2, uint64_t(p.out_c), uint64_t(p.in_c) * p.k_h * p.k_w));
}

Error check_s8(const OpCheck& c) { return check_transpose_conv(c, DType::kInt8, DType::kInt32); }
Error check_f32(const OpCheck& c) { return check_transpose_conv(c, DType::kFloat32, DType::kFloat32); }

void eval_s8(const OpCall& c) {
  kernels::transpose_conv_s8(c.get_params<ConvParams>(), c.in<int8_t>(0), c.in<int8_t>(1), c.in<int32_t>(2),
                             c.in<int32_t>(3), c.in<int32_t>(4), c.out<int8_t>(0));
}
void eval_f32(const OpCall& c) {
  kernels::transpose_conv_f32(c.get_params<ConvParams>(), c.in<float>(0), c.in<float>(1), c.in<float>(2),
                              c.out<float>(0));
}

}  // namespace

extern const KernelEntry kernel_entry_transpose_conv_s8 = {sizeof(ConvParams), 5, 1, check_s8, eval_s8};
extern const KernelEntry kernel_entry_transpose_conv_f32 = {sizeof(ConvParams), 3, 1, check_f32, eval_f32};

}  // namespace mcuflow::ops
