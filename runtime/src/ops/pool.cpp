// Adapters for maxpool_* / avgpool_* (int8, int16, float32).
#include "check.h"
#include "mcuflow/kernels/kernels.h"

namespace mcuflow::ops {
namespace {

using format::DType;
using kernels::PoolParams;

Error check_pool(const OpCheck& c, DType dtype) {
  const auto& p = c.get_params<PoolParams>();
  if (!positive(p.in_h) || !positive(p.in_w) || !positive(p.c) || !positive(p.out_h) || !positive(p.out_w) ||
      !positive(p.k_h) || !positive(p.k_w) || !positive(p.stride_h) || !positive(p.stride_w) ||
      !in_range(p.pad_top, 0, p.k_h - 1) || !in_range(p.pad_left, 0, p.k_w - 1))
    return Error::kBadParams;
  // Every window must cover at least one input element (avgpool divides by that count).
  if (int64_t(p.out_h - 1) * p.stride_h - p.pad_top >= p.in_h ||
      int64_t(p.out_w - 1) * p.stride_w - p.pad_left >= p.in_w)
    return Error::kBadParams;
  if (!tensor_is(c, 0, dtype, uint64_t(p.in_h) * p.in_w * p.c) ||
      !output_is(c, dtype, uint64_t(p.out_h) * p.out_w * p.c))
    return Error::kBadParams;
  return ok_if(dtype == DType::kFloat32 || activation_range_valid(p.act_min, p.act_max, dtype));
}

}  // namespace

Error check_pool_s8(const OpCheck& c) { return check_pool(c, DType::kInt8); }
Error check_pool_f32(const OpCheck& c) { return check_pool(c, DType::kFloat32); }
Error check_pool_s16(const OpCheck& c) { return check_pool(c, DType::kInt16); }

namespace {

void eval_maxpool_s8(const OpCall& c) { kernels::maxpool_s8(c.get_params<PoolParams>(), c.in<int8_t>(0), c.out<int8_t>(0)); }
void eval_avgpool_s8(const OpCall& c) { kernels::avgpool_s8(c.get_params<PoolParams>(), c.in<int8_t>(0), c.out<int8_t>(0)); }
void eval_maxpool_s16(const OpCall& c) {
  kernels::maxpool_s16(c.get_params<PoolParams>(), c.in<int16_t>(0), c.out<int16_t>(0));
}
void eval_avgpool_s16(const OpCall& c) {
  kernels::avgpool_s16(c.get_params<PoolParams>(), c.in<int16_t>(0), c.out<int16_t>(0));
}
void eval_maxpool_f32(const OpCall& c) { kernels::maxpool_f32(c.get_params<PoolParams>(), c.in<float>(0), c.out<float>(0)); }
void eval_avgpool_f32(const OpCall& c) { kernels::avgpool_f32(c.get_params<PoolParams>(), c.in<float>(0), c.out<float>(0)); }

}  // namespace

// Access order: output pixels forwards, each reading only its own window before (or while)
// writing it.
extern const KernelEntry kernel_entry_maxpool_s8 = {sizeof(PoolParams), 1, 1, check_pool_s8, eval_maxpool_s8,
                                                    aliasing::kPoolForward};
extern const KernelEntry kernel_entry_avgpool_s8 = {sizeof(PoolParams), 1, 1, check_pool_s8, eval_avgpool_s8,
                                                    aliasing::kPoolForward};
extern const KernelEntry kernel_entry_maxpool_f32 = {sizeof(PoolParams), 1, 1, check_pool_f32, eval_maxpool_f32,
                                                     aliasing::kPoolForward};
extern const KernelEntry kernel_entry_avgpool_f32 = {sizeof(PoolParams), 1, 1, check_pool_f32, eval_avgpool_f32,
                                                     aliasing::kPoolForward};
// The int16 kernels have no access contract yet: never run in place.
extern const KernelEntry kernel_entry_maxpool_s16 = {sizeof(PoolParams), 1, 1, check_pool_s16, eval_maxpool_s16};
extern const KernelEntry kernel_entry_avgpool_s16 = {sizeof(PoolParams), 1, 1, check_pool_s16, eval_avgpool_s16};

}  // namespace mcuflow::ops
