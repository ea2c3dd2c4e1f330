// Device adapters for the MVE quantize and dequantize kernels: checks.h lists their inputs and checks.
#include "checks.h"
#include "mcuflow/kernels/kernels_mve.h"

namespace mcuflow::ops {
namespace {

using kernels::QuantizeParams;

void eval_quantize_f32_s8_mve(const OpCall& c) {
  kernels::quantize_f32_s8_mve(c.get_params<QuantizeParams>(), c.in<float>(0), c.out<int8_t>(0));
}
void eval_dequantize_s8_f32_mve(const OpCall& c) {
  kernels::dequantize_s8_f32_mve(c.get_params<QuantizeParams>(), c.in<int8_t>(0), c.out<float>(0));
}

}  // namespace

extern const KernelEntry kernel_entry_quantize_f32_s8_mve =
    kernel_check_quantize_f32_s8_mve.with_eval(eval_quantize_f32_s8_mve);
extern const KernelEntry kernel_entry_dequantize_s8_f32_mve =
    kernel_check_dequantize_s8_f32_mve.with_eval(eval_dequantize_s8_f32_mve);

}  // namespace mcuflow::ops
