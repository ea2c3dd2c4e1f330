// Adapters for group_norm_s8 / group_norm_f32 (layer_norm, GroupNorm, InstanceNorm).
#include "check.h"
#include "mcuflow/kernels/kernels.h"

namespace mcuflow::ops {
namespace {

using format::DType;
using kernels::GroupNormParams;

bool shape_valid(const OpCheck& c, const GroupNormParams& p, DType act, DType weight, DType bias) {
  if (p.outer < 1 || p.spatial < 1 || !positive(p.groups) || !positive(p.group_size) ||
      uint64_t(p.groups) * p.group_size > kMaxExtent)
    return false;
  const uint64_t channels = uint64_t(p.groups) * p.group_size;
  const uint64_t n = uint64_t(p.outer) * p.spatial * channels;
  return tensor_is(c, 0, act, n) && tensor_is(c, 1, weight, channels) && tensor_is(c, 2, bias, channels) &&
         output_is(c, act, n);
}

// Each of the `count` int32 values of the read-only constant at `slot` lies in [lo, hi].
bool constants_within(const OpCheck& c, uint32_t slot, uint64_t count, int32_t lo, int32_t hi) {
  const format::TensorRecord& t = c.tensor(slot);
  if (!tensor_is(c, slot, DType::kInt32, count) || !read_only(t) || t.offset % 4 != 0) return false;
  const int32_t* values = reinterpret_cast<const int32_t*>(c.constants + t.offset);
  for (uint64_t i = 0; i < count; ++i) {
    if (!in_range(values[i], lo, hi)) return false;
  }
  return true;
}

// The kernel's ranges hold for at most kGroupNormMaxCount values a group; the accumulator
// normalized * weight + bias fits int32 only for |bias| <= 2^30, and a left shift before the
// multiply could wrap it: shifts must be <= 0. eps_q <= 2^59 keeps v below 2^60.
Error check_group_norm_s8(const OpCheck& c) {
  const auto& p = c.get_params<GroupNormParams>();
  if (!shape_valid(c, p, DType::kInt8, DType::kInt8, DType::kInt32) ||
      uint64_t(p.spatial) * p.group_size > uint64_t(kernels::kGroupNormMaxCount))
    return Error::kBadParams;
  const uint64_t channels = uint64_t(p.groups) * p.group_size;
  const int64_t eps = int64_t((uint64_t(uint32_t(p.eps_hi)) << 32) | uint32_t(p.eps_lo));
  return ok_if(eps >= 0 && eps <= kernels::kGroupNormMaxEps && in_range(p.output_offset, -128, 127) &&
               int8_activation_range(p.act_min, p.act_max) && requant_tables_valid(c, 3, 4, channels) &&
               constants_within(c, 2, channels, -kernels::kGroupNormMaxBias, kernels::kGroupNormMaxBias) &&
               constants_within(c, 4, channels, -31, 0));
}

Error check_group_norm_f32(const OpCheck& c) {
  const auto& p = c.get_params<GroupNormParams>();
  return ok_if(shape_valid(c, p, DType::kFloat32, DType::kFloat32, DType::kFloat32) && p.eps >= 0.0f);
}

void eval_group_norm_s8(const OpCall& c) {
  kernels::group_norm_s8(c.get_params<GroupNormParams>(), c.in<int8_t>(0), c.in<int8_t>(1), c.in<int32_t>(2),
                         c.in<int32_t>(3), c.in<int32_t>(4), c.out<int8_t>(0));
}

void eval_group_norm_f32(const OpCall& c) {
  kernels::group_norm_f32(c.get_params<GroupNormParams>(), c.in<float>(0), c.in<float>(1), c.in<float>(2),
                          c.out<float>(0));
}

}  // namespace

// Access order: per group, every element read for the statistics, then each element read before
// its output is written; other groups' elements are neither read nor written meanwhile.
extern const KernelEntry kernel_entry_group_norm_s8 = {sizeof(GroupNormParams), 5, 1, check_group_norm_s8,
                                                       eval_group_norm_s8, aliasing::kExactlyInPlace};
extern const KernelEntry kernel_entry_group_norm_f32 = {sizeof(GroupNormParams), 3, 1, check_group_norm_f32,
                                                        eval_group_norm_f32, aliasing::kExactlyInPlace};

}  // namespace mcuflow::ops
