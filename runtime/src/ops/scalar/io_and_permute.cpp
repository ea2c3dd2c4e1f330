// Device adapters for the scalar permute and dequantize kernels (checks.h).
#include "checks.h"
#include "mcuflow/kernels/kernels_scalar.h"

namespace mcuflow::ops {
namespace {

void eval_permute_b8_scalar(const OpCall& c) {
  kernels::permute_b8_scalar(c.get_params<kernels::PermuteParams>(), c.in<int8_t>(0), c.out<int8_t>(0));
}

void eval_dequantize_s8_f32_scalar(const OpCall& c) {
  kernels::dequantize_s8_f32_scalar(c.get_params<kernels::QuantizeParams>(), c.in<int8_t>(0),
                                    c.in<uint32_t>(kernels::kDequantizeTableSlot), c.out<float>(0));
}

}  // namespace

extern const KernelEntry kernel_entry_permute_b8_scalar = kernel_check_permute_b8_scalar.with_eval(eval_permute_b8_scalar);
extern const KernelEntry kernel_entry_dequantize_s8_f32_scalar =
    kernel_check_dequantize_s8_f32_scalar.with_eval(eval_dequantize_s8_f32_scalar);

}  // namespace mcuflow::ops
