// Adapters for avgpool_include_pad_s8 / avgpool_include_pad_f32.
#include "check.h"
#include "mcuflow/kernels/kernels.h"

namespace mcuflow::ops {
namespace {

using format::DType;
using kernels::AvgPoolIncludePadParams;

// The int8 window sum of k_h * k_w values of magnitude <= 128 must fit int32.
constexpr int64_t kMaxWindow = int64_t{1} << 23;

Error check_avgpool_include_pad(const OpCheck& c, DType dtype) {
  const auto& params = c.get_params<AvgPoolIncludePadParams>();
  const kernels::PoolParams& p = params.pool;
  if (!positive(p.in_h) || !positive(p.in_w) || !positive(p.c) || !positive(p.out_h) || !positive(p.out_w) ||
      !positive(p.k_h) || !positive(p.k_w) || !positive(p.stride_h) || !positive(p.stride_w) ||
      !in_range(p.pad_top, 0, kMaxExtent) || !in_range(p.pad_left, 0, kMaxExtent) ||
      int64_t(p.k_h) * p.k_w > kMaxWindow)
    return Error::kBadParams;
  if (!tensor_is(c, 0, dtype, uint64_t(p.in_h) * p.in_w * p.c) ||
      !output_is(c, dtype, uint64_t(p.out_h) * p.out_w * p.c))
    return Error::kBadParams;
  return ok_if(dtype == DType::kFloat32 ||
               (int8_activation_range(p.act_min, p.act_max) && in_range(params.pad_value, -128, 127)));
}

Error check_s8(const OpCheck& c) { return check_avgpool_include_pad(c, DType::kInt8); }
Error check_f32(const OpCheck& c) { return check_avgpool_include_pad(c, DType::kFloat32); }

void eval_s8(const OpCall& c) {
  kernels::avgpool_include_pad_s8(c.get_params<AvgPoolIncludePadParams>(), c.in<int8_t>(0), c.out<int8_t>(0));
}
void eval_f32(const OpCall& c) {
  kernels::avgpool_include_pad_f32(c.get_params<AvgPoolIncludePadParams>(), c.in<float>(0), c.out<float>(0));
}

}  // namespace

extern const KernelEntry kernel_entry_avgpool_include_pad_s8 = {sizeof(AvgPoolIncludePadParams), 1, 1, check_s8,
                                                                eval_s8};
extern const KernelEntry kernel_entry_avgpool_include_pad_f32 = {sizeof(AvgPoolIncludePadParams), 1, 1, check_f32,
                                                                 eval_f32};

}  // namespace mcuflow::ops
