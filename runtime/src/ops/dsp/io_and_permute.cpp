// Device adapters for the DSP permute, quantize and dequantize kernels (checks.h).
#include "checks.h"
#include "mcuflow/kernels/kernels_dsp.h"

namespace mcuflow::ops {
namespace {

void eval_permute_b8_dsp(const OpCall& c) {
  kernels::permute_b8_dsp(c.get_params<kernels::PermuteParams>(), c.in<int8_t>(0), c.out<int8_t>(0));
}

void eval_quantize_f32_s8_dsp(const OpCall& c) {
  kernels::quantize_f32_s8_dsp(c.get_params<kernels::QuantizeParams>(), c.in<float>(0), c.out<int8_t>(0));
}

void eval_dequantize_s8_f32_dsp(const OpCall& c) {
  kernels::dequantize_s8_f32_dsp(c.get_params<kernels::QuantizeParams>(), c.in<int8_t>(0),
                                 c.in<uint32_t>(kernels::kDequantizeTableSlot), c.out<float>(0));
}

}  // namespace

extern const KernelEntry kernel_entry_permute_b8_dsp = kernel_check_permute_b8_dsp.with_eval(eval_permute_b8_dsp);
extern const KernelEntry kernel_entry_quantize_f32_s8_dsp =
    kernel_check_quantize_f32_s8_dsp.with_eval(eval_quantize_f32_s8_dsp);
extern const KernelEntry kernel_entry_dequantize_s8_f32_dsp =
    kernel_check_dequantize_s8_f32_dsp.with_eval(eval_dequantize_s8_f32_dsp);

}  // namespace mcuflow::ops
