// Adapters for softmax_s8 / softmax_f32.
#include "check.h"
#include "mcuflow/kernels/kernels.h"

namespace mcuflow::ops {
namespace {

using format::DType;
using kernels::SoftmaxParams;

Error check_softmax(const OpCheck& c, DType dtype) {
  const auto& p = c.get_params<SoftmaxParams>();
  if (p.rows < 1 || !positive(p.depth)) return Error::kBadParams;
  const uint64_t n = uint64_t(p.rows) * p.depth;
  if (!tensor_is(c, 0, dtype, n) || !output_is(c, dtype, n)) return Error::kBadParams;
  return ok_if(dtype == DType::kFloat32 || (p.depth <= kernels::kSoftmaxMaxDepthS8 && p.input_multiplier >= 0 &&
                                            in_range(p.input_left_shift, 0, 31) && p.diff_min <= 0));
}

}  // namespace

Error check_softmax_s8(const OpCheck& c) { return check_softmax(c, DType::kInt8); }
Error check_softmax_f32(const OpCheck& c) { return check_softmax(c, DType::kFloat32); }

namespace {

void eval_s8(const OpCall& c) { kernels::softmax_s8(c.get_params<SoftmaxParams>(), c.in<int8_t>(0), c.out<int8_t>(0)); }
void eval_f32(const OpCall& c) { kernels::softmax_f32(c.get_params<SoftmaxParams>(), c.in<float>(0), c.out<float>(0)); }

}  // namespace

extern const KernelEntry kernel_entry_softmax_s8 = {sizeof(SoftmaxParams), 1, 1, check_softmax_s8, eval_s8};
extern const KernelEntry kernel_entry_softmax_f32 = {sizeof(SoftmaxParams), 1, 1, check_softmax_f32, eval_f32};

}  // namespace mcuflow::ops
