// Checks of the DSP conv kernels (checks.h).
#include "check_helpers.h"

namespace mcuflow::ops {
namespace {

using kernels::ConvParams;

// The reference's checks, then the scratch and the window depth the kernels support.
Error check_dsp_conv(const OpCheck& c) {
  if (const Error e = check_conv_s8(c); e != Error::kOk) return e;
  const auto& p = c.get_params<ConvParams>();
  const int64_t depth = int64_t(p.k_h) * p.k_w * p.in_c;
  return ok_if(depth >= 4 && depth <= kernels::kDspMaxDepth && dsp::constant_inputs(c) &&
               dsp::scratch_fits(c, dsp::kScratchSlot, uint64_t(kernels::kDspPixels) * ((depth + 3) / 4 * 4) * 2));
}

}  // namespace

Error check_conv_s8_dsp(const OpCheck& c) { return check_dsp_conv(c); }

Error check_conv_s8_1x1_dsp(const OpCheck& c) {
  if (const Error e = check_dsp_conv(c); e != Error::kOk) return e;
  const auto& p = c.get_params<ConvParams>();
  // Every output pixel reads one input pixel: no padding, the strided grid inside the input.
  return ok_if(p.k_h == 1 && p.k_w == 1 && p.pad_top == 0 && p.pad_left == 0 &&
               int64_t(p.out_h - 1) * p.stride_h < p.in_h && int64_t(p.out_w - 1) * p.stride_w < p.in_w);
}

}  // namespace mcuflow::ops
