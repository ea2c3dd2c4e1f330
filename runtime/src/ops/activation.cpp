// Adapters for lut_s8 (int8 activations as a 256-entry table), lut_s16 (int16 activations as a
// 513-entry interpolated table) and activation_f32.
#include "check.h"
#include "mcuflow/kernels/kernels.h"
#include "mcuflow/kernels/lut_s16.h"

namespace mcuflow::ops {

using format::DType;
using kernels::ActivationParams;
using kernels::LutParams;

constexpr uint64_t kLutEntries = 256;

// Every tier's lut kernel takes this check (scalar/checks.h).
Error check_lut_s8(const OpCheck& c) {
  const auto& p = c.get_params<LutParams>();
  // Any int8 input indexes one of the 256 entries, wherever the table is stored.
  return ok_if(p.n >= 1 && tensor_is(c, 0, DType::kInt8, uint64_t(p.n)) && tensor_is(c, 1, DType::kInt8, kLutEntries) &&
               output_is(c, DType::kInt8, uint64_t(p.n)));
}

// Every tier's lut_s16 kernel takes this check: any int16 input reads two neighbouring entries of
// the 513, and any int16 entries interpolate within int32 (lut_s16.h).
Error check_lut_s16(const OpCheck& c) {
  const auto& p = c.get_params<LutParams>();
  return ok_if(p.n >= 1 && tensor_is(c, 0, DType::kInt16, uint64_t(p.n)) &&
               tensor_is(c, 1, DType::kInt16, uint64_t(kernels::kLutS16Entries)) &&
               output_is(c, DType::kInt16, uint64_t(p.n)));
}

namespace {

Error check_activation_f32(const OpCheck& c) {
  const auto& p = c.get_params<ActivationParams>();
  return ok_if(p.n >= 1 && in_range(p.function, 0, kernels::kActFunctionCount - 1) &&
               tensor_is(c, 0, DType::kFloat32, uint64_t(p.n)) && output_is(c, DType::kFloat32, uint64_t(p.n)));
}

void eval_lut_s8(const OpCall& c) {
  kernels::lut_s8(c.get_params<LutParams>(), c.in<int8_t>(0), c.in<int8_t>(1), c.out<int8_t>(0));
}
void eval_lut_s16(const OpCall& c) {
  kernels::lut_s16(c.get_params<LutParams>(), c.in<int16_t>(0), c.in<int16_t>(1), c.out<int16_t>(0));
}
void eval_activation_f32(const OpCall& c) {
  kernels::activation_f32(c.get_params<ActivationParams>(), c.in<float>(0), c.out<float>(0));
}

}  // namespace

extern const KernelEntry kernel_entry_lut_s8 = {sizeof(LutParams), 2, 1, check_lut_s8, eval_lut_s8};
extern const KernelEntry kernel_entry_lut_s16 = {sizeof(LutParams), 2, 1, check_lut_s16, eval_lut_s16};
extern const KernelEntry kernel_entry_activation_f32 = {sizeof(ActivationParams), 1, 1, check_activation_f32,
                                                        eval_activation_f32};

}  // namespace mcuflow::ops
