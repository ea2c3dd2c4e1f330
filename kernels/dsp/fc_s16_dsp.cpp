// Fully connected, int16 activations and int8 weights, DSP extension: blocks of kDspPixels rows
// repaired into SMLAD's pairs (kernels_dsp.h), then every weight row against the block (int32
// path of s16_tiers.h; else the reference).
#include "dsp_s16_blocks.h"
#include "mcuflow/kernels/kernels.h"

namespace mcuflow::kernels {

void fc_s16_dsp(const FcParams& p, const int16_t* input, const int8_t* weights, const int64_t* bias,
                const int32_t* multipliers, const int32_t* shifts, int16_t* scratch, int16_t* output) {
  const dsp::S16Matrix m{weights, bias, multipliers, shifts, p.per_channel ? 1 : 0, p.in_c, p.out_c, p.out};
  if (!m.fits_int32()) {
    fc_s16(p, input, weights, bias, multipliers, shifts, output);
    return;
  }
  const int32_t in_c = p.in_c;
  m.run(p.rows, scratch, output,
        [&](int32_t r, int32_t slot) { dsp::S16Writer(scratch, slot, 0).run(input + r * in_c, in_c, 0); });
}

}  // namespace mcuflow::kernels
