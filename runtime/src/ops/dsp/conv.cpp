// Adapters for the DSP conv kernels. Inputs: the reference's five (input, weights, bias,
// multipliers, shifts), then the im2col scratch (kernels_dsp.h).
#include "dsp_check.h"

namespace mcuflow::ops {
namespace {

using kernels::ConvParams;

constexpr uint32_t kScratchSlot = 5;

// The reference's checks, then the scratch and the window depth the kernels support.
Error check_dsp_conv(const OpCheck& c) {
  if (const Error e = check_conv_s8(c); e != Error::kOk) return e;
  const auto& p = c.get_params<ConvParams>();
  const int64_t depth = int64_t(p.k_h) * p.k_w * p.in_c;
  return ok_if(depth >= 4 && depth <= kernels::kDspMaxDepth && dsp::constant_inputs(c) &&
               dsp::scratch_fits(c, kScratchSlot, uint64_t(kernels::kDspPixels) * ((depth + 3) / 4 * 4) * 2));
}

Error check_conv_s8_dsp(const OpCheck& c) { return check_dsp_conv(c); }

Error check_conv_s8_1x1_dsp(const OpCheck& c) {
  if (const Error e = check_dsp_conv(c); e != Error::kOk) return e;
  const auto& p = c.get_params<ConvParams>();
  // Every output pixel reads one input pixel: no padding, the strided grid inside the input.
  return ok_if(p.k_h == 1 && p.k_w == 1 && p.pad_top == 0 && p.pad_left == 0 &&
               int64_t(p.out_h - 1) * p.stride_h < p.in_h && int64_t(p.out_w - 1) * p.stride_w < p.in_w);
}

template <void (*kKernel)(const ConvParams&, const int8_t*, const int8_t*, const int32_t*, const int32_t*,
                          const int32_t*, int16_t*, int8_t*)>
void eval(const OpCall& c) {
  kKernel(c.get_params<ConvParams>(), c.in<int8_t>(0), c.in<int8_t>(1), c.in<int32_t>(2), c.in<int32_t>(3),
          c.in<int32_t>(4), reinterpret_cast<int16_t*>(c.data[kScratchSlot]), c.out<int8_t>(0));
}

}  // namespace

extern const KernelEntry kernel_entry_conv_s8_1x1_dsp = {sizeof(ConvParams), 6, 1, check_conv_s8_1x1_dsp,
                                                         eval<kernels::conv_s8_1x1_dsp>};
extern const KernelEntry kernel_entry_conv_s8_dsp = {sizeof(ConvParams), 6, 1, check_conv_s8_dsp,
                                                     eval<kernels::conv_s8_dsp>};

}  // namespace mcuflow::ops
