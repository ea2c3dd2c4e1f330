// Adapters for batch_matmul_s8 / batch_matmul_f32.
#include "check.h"
#include "mcuflow/kernels/kernels.h"

namespace mcuflow::ops {
namespace {

using format::DType;
using kernels::BatchMatmulParams;

Error check_batch_matmul(const OpCheck& c, DType dtype) {
  const auto& p = c.get_params<BatchMatmulParams>();
  if (!positive(p.batch) || !positive(p.m) || !positive(p.k) || !positive(p.n) || !in_range(p.rhs_transposed, 0, 1))
    return Error::kBadParams;
  const uint64_t b = uint64_t(p.batch);
  if (!tensor_is(c, 0, dtype, b * p.m * p.k) || !tensor_is(c, 1, dtype, b * p.k * p.n) ||
      !output_is(c, dtype, b * p.m * p.n))
    return Error::kBadParams;
  if (dtype == DType::kFloat32) return Error::kOk;
  return ok_if(p.k <= kernels::kBatchMatmulMaxDepthS8 && zero_point_offsets(p.lhs_offset, p.output_offset) &&
               zero_point_offsets(p.rhs_offset, p.output_offset) && p.multiplier >= 0 &&
               in_range(p.shift, -31, 30) && int8_activation_range(p.act_min, p.act_max));
}

Error check_s8(const OpCheck& c) { return check_batch_matmul(c, DType::kInt8); }
Error check_f32(const OpCheck& c) { return check_batch_matmul(c, DType::kFloat32); }

void eval_s8(const OpCall& c) {
  kernels::batch_matmul_s8(c.get_params<BatchMatmulParams>(), c.in<int8_t>(0), c.in<int8_t>(1), c.out<int8_t>(0));
}
void eval_f32(const OpCall& c) {
  kernels::batch_matmul_f32(c.get_params<BatchMatmulParams>(), c.in<float>(0), c.in<float>(1), c.out<float>(0));
}

}  // namespace

extern const KernelEntry kernel_entry_batch_matmul_s8 = {sizeof(BatchMatmulParams), 2, 1, check_s8, eval_s8};
extern const KernelEntry kernel_entry_batch_matmul_f32 = {sizeof(BatchMatmulParams), 2, 1, check_f32, eval_f32};

}  // namespace mcuflow::ops
