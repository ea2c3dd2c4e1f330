// Adapters for add / mul / sub / minimum / maximum (int8, int16, float32).
#include "check.h"
#include "mcuflow/kernels/kernels.h"

namespace mcuflow::ops {
namespace {

using format::DType;
using kernels::BinaryParams;

Error check_binary(const OpCheck& c, DType dtype) {
  const auto& p = c.get_params<BinaryParams>();
  if (p.outer < 1 || p.inner < 1 || !in_range(p.in2_mode, 0, 2)) return Error::kBadParams;
  const uint64_t n = uint64_t(p.outer) * p.inner;
  const uint64_t n2 = p.in2_mode == 0 ? n : p.in2_mode == 1 ? uint64_t(p.inner) : 1;
  if (!tensor_is(c, 0, dtype, n) || !tensor_is(c, 1, dtype, n2) || !output_is(c, dtype, n)) return Error::kBadParams;
  if (dtype == DType::kFloat32) return Error::kOk;
  // int16 (symmetric): no offsets, and |x| <= 2^15 shifted by at most 15 stays within int32.
  const bool offsets = dtype == DType::kInt16
                           ? p.input1_offset == 0 && p.input2_offset == 0 && p.output_offset == 0 &&
                                 in_range(p.left_shift, 0, 15)
                           : zero_point_offsets(p.input1_offset, p.output_offset) &&
                                 zero_point_offsets(p.input2_offset, p.output_offset) && in_range(p.left_shift, 0, 20);
  return ok_if(offsets && p.input1_multiplier >= 0 && p.input2_multiplier >= 0 && p.output_multiplier >= 0 &&
               in_range(p.input1_shift, -31, 30) && in_range(p.input2_shift, -31, 30) &&
               in_range(p.output_shift, -31, 30) && activation_range_valid(p.act_min, p.act_max, dtype));
}

}  // namespace

Error check_binary_s8(const OpCheck& c) { return check_binary(c, DType::kInt8); }
Error check_binary_f32(const OpCheck& c) { return check_binary(c, DType::kFloat32); }

namespace {

Error check_binary_s16(const OpCheck& c) { return check_binary(c, DType::kInt16); }

void eval_add_s8(const OpCall& c) {
  kernels::add_s8(c.get_params<BinaryParams>(), c.in<int8_t>(0), c.in<int8_t>(1), c.out<int8_t>(0));
}
void eval_mul_s8(const OpCall& c) {
  kernels::mul_s8(c.get_params<BinaryParams>(), c.in<int8_t>(0), c.in<int8_t>(1), c.out<int8_t>(0));
}
void eval_add_f32(const OpCall& c) {
  kernels::add_f32(c.get_params<BinaryParams>(), c.in<float>(0), c.in<float>(1), c.out<float>(0));
}
void eval_mul_f32(const OpCall& c) {
  kernels::mul_f32(c.get_params<BinaryParams>(), c.in<float>(0), c.in<float>(1), c.out<float>(0));
}

// sub, minimum, maximum: BinaryParams too (minimum/maximum use the input multipliers to
// rescale both inputs to the output and ignore left_shift and the output multiplier).
template <void (*kKernel)(const BinaryParams&, const int8_t*, const int8_t*, int8_t*)>
void eval_s8(const OpCall& c) {
  kKernel(c.get_params<BinaryParams>(), c.in<int8_t>(0), c.in<int8_t>(1), c.out<int8_t>(0));
}
template <void (*kKernel)(const BinaryParams&, const int16_t*, const int16_t*, int16_t*)>
void eval_s16(const OpCall& c) {
  kKernel(c.get_params<BinaryParams>(), c.in<int16_t>(0), c.in<int16_t>(1), c.out<int16_t>(0));
}
template <void (*kKernel)(const BinaryParams&, const float*, const float*, float*)>
void eval_f32(const OpCall& c) {
  kKernel(c.get_params<BinaryParams>(), c.in<float>(0), c.in<float>(1), c.out<float>(0));
}

}  // namespace

// Access order: element i of both inputs read before it is written, in increasing i.
extern const KernelEntry kernel_entry_add_s8 = {sizeof(BinaryParams), 2, 1, check_binary_s8, eval_add_s8,
                                                aliasing::kElementwise};
extern const KernelEntry kernel_entry_mul_s8 = {sizeof(BinaryParams), 2, 1, check_binary_s8, eval_mul_s8,
                                                aliasing::kElementwise};
extern const KernelEntry kernel_entry_add_f32 = {sizeof(BinaryParams), 2, 1, check_binary_f32, eval_add_f32,
                                                 aliasing::kElementwise};
extern const KernelEntry kernel_entry_mul_f32 = {sizeof(BinaryParams), 2, 1, check_binary_f32, eval_mul_f32,
                                                 aliasing::kElementwise};
extern const KernelEntry kernel_entry_sub_s8 = {sizeof(BinaryParams), 2, 1, check_binary_s8, eval_s8<kernels::sub_s8>};
extern const KernelEntry kernel_entry_sub_f32 = {sizeof(BinaryParams), 2, 1, check_binary_f32, eval_f32<kernels::sub_f32>};
extern const KernelEntry kernel_entry_minimum_s8 = {sizeof(BinaryParams), 2, 1, check_binary_s8,
                                                    eval_s8<kernels::minimum_s8>};
extern const KernelEntry kernel_entry_maximum_s8 = {sizeof(BinaryParams), 2, 1, check_binary_s8,
                                                    eval_s8<kernels::maximum_s8>};
extern const KernelEntry kernel_entry_minimum_f32 = {sizeof(BinaryParams), 2, 1, check_binary_f32,
                                                     eval_f32<kernels::minimum_f32>};
extern const KernelEntry kernel_entry_maximum_f32 = {sizeof(BinaryParams), 2, 1, check_binary_f32,
                                                     eval_f32<kernels::maximum_f32>};
extern const KernelEntry kernel_entry_add_s16 = {sizeof(BinaryParams), 2, 1, check_binary_s16, eval_s16<kernels::add_s16>};
extern const KernelEntry kernel_entry_mul_s16 = {sizeof(BinaryParams), 2, 1, check_binary_s16, eval_s16<kernels::mul_s16>};

}  // namespace mcuflow::ops
