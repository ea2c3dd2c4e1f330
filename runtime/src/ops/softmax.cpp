// Adapters for softmax_s8 / softmax_s16 / softmax_f32.
#include "check.h"
#include "mcuflow/kernels/kernels.h"
#include "mcuflow/kernels/softmax_s16.h"

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

// Every tier's softmax_s16 kernel takes this check. The exp table is a constant of entries in
// [0, 32767] with exp(0) = 32767, so every row sum lies in [32767, 2^31) (softmax_s16.h).
Error check_softmax_s16(const OpCheck& c) {
  const auto& p = c.get_params<kernels::SoftmaxS16Params>();
  if (p.rows < 1 || !in_range(p.depth, 1, kernels::kSoftmaxS16MaxDepth)) return Error::kBadParams;
  if (!in_range(p.diff_multiplier, 1 << 14, (1 << 15) - 1) || !in_range(p.diff_shift, 1, 31)) return Error::kBadParams;
  const uint64_t n = uint64_t(p.rows) * uint64_t(p.depth);
  if (!tensor_is(c, 0, DType::kInt16, n) || !output_is(c, DType::kInt16, n)) return Error::kBadParams;
  const int16_t* table = table_of<int16_t>(c, 1, DType::kInt16, kernels::kLutS16Entries);
  if (table == nullptr || table[0] != kernels::kSoftmaxS16OutputMax) return Error::kBadParams;
  for (int32_t i = 1; i < kernels::kLutS16Entries; ++i) {
    if (table[i] < 0) return Error::kBadParams;
  }
  return Error::kOk;
}

namespace {

void eval_s8(const OpCall& c) { kernels::softmax_s8(c.get_params<SoftmaxParams>(), c.in<int8_t>(0), c.out<int8_t>(0)); }
void eval_s16(const OpCall& c) {
  kernels::softmax_s16(c.get_params<kernels::SoftmaxS16Params>(), c.in<int16_t>(0), c.in<int16_t>(1), c.out<int16_t>(0));
}
void eval_f32(const OpCall& c) { kernels::softmax_f32(c.get_params<SoftmaxParams>(), c.in<float>(0), c.out<float>(0)); }

}  // namespace

extern const KernelEntry kernel_entry_softmax_s8 = {sizeof(SoftmaxParams), 1, 1, check_softmax_s8, eval_s8};
extern const KernelEntry kernel_entry_softmax_s16 = {sizeof(kernels::SoftmaxS16Params), 2, 1, check_softmax_s16, eval_s16};
extern const KernelEntry kernel_entry_softmax_f32 = {sizeof(SoftmaxParams), 1, 1, check_softmax_f32, eval_f32};

}  // namespace mcuflow::ops
