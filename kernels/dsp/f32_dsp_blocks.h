// Building blocks of the float32 DSP-tier kernels (conv_f32_dsp, conv_f32_1x1_dsp, dwconv_f32_dsp,
// fc_f32_dsp), device builds with a single-precision FPU only. Kernel-private, like dsp_blocks.h.
//
// Why they equal their references bit for bit: VMLA.F32 (FPv4 / FPv5; not VFMA, which is fused)
// rounds the product, then the sum: exactly the reference's `acc += x * w` built with
// -ffp-contract=off (VMUL, then VADD with the accumulator first, the input before the weight),
// denormals, FPSCR.FZ and NaN operands included. The kernels block across outputs only (several
// channels, two pixels); each output sums its products from +0.0f in the reference's order, then
// adds its bias (when there is one) and clamps as the reference does (docs/kernels_float.md).
#pragma once
#include <cstring>

#include "../reference/window.h"
#include "mcuflow/kernels/kernels_dsp.h"

#if !defined(__ARM_FP) || !(__ARM_FP & 4)
#error "the float32 DSP kernels need single-precision hardware float (an FPv4/FPv5 -mfpu, -mfloat-abi=hard or softfp)"
#endif

namespace mcuflow::kernels::dsp_f32 {

// Output channels per weight block: four weight rows walked at once (one VLDM of four weights each).
inline constexpr int32_t kChannels = 4;

// acc[p][c] += x[p][i] * w[c][i] for i < n, in order of i, for kPixels (1 or 2) input runs and
// kChannels weight rows: per four i, one VLDM of four inputs per pixel, one of four weights per
// row and a VMLA.F32 per product; the last n % 4 i one input and one weight per VLDM. The
// assembly keeps every register it uses to itself (the accumulators loaded into s24-s31 and
// stored back around the loops, inputs in s10-s13 and s0-s3, weights in s20-s23).
template <int kPixels>
inline void multiply_accumulate(float (&acc)[kPixels][kChannels], const float* const (&x)[kPixels],
                                const float* const (&w)[kChannels], int32_t n) {
  static_assert(kPixels == 1 || kPixels == 2, "one or two pixels per pass");
  if (n <= 0) return;
  int32_t left = n;  // the loops count it down: by four while four remain, then by one
  const float *w0 = w[0], *w1 = w[1], *w2 = w[2], *w3 = w[3], *x0 = x[0];
// Four VMLAs into accumulator register a: inputs x0-x3 times weights w0-w3 (x, w: the register
// names' prefixes, "s1" for s10-s13).
#define MCUFLOW_F32_MLA4(a, x, w)                                           \
  "vmla.f32 " a ", " x "0, " w "0\n\tvmla.f32 " a ", " x "1, " w "1\n\t" \
  "vmla.f32 " a ", " x "2, " w "2\n\tvmla.f32 " a ", " x "3, " w "3\n\t"
// The loops' control, `left` counted down: the quads' loop (label 1) while four remain, then the
// singles' (label 3), then the end (label 4).
#define MCUFLOW_F32_QUADS "subs %[left], %[left], #4\n\tblt 2f\n1:\n\t"
#define MCUFLOW_F32_SINGLES "subs %[left], %[left], #4\n\tbge 1b\n2:\n\tadds %[left], %[left], #4\n\tbeq 4f\n3:\n\t"
#define MCUFLOW_F32_DONE "subs %[left], %[left], #1\n\tbne 3b\n4:\n\t"
  if constexpr (kPixels == 1) {
    asm volatile(
        "vldm %[acc], {s24-s27}\n\t"
        MCUFLOW_F32_QUADS
        "vldmia %[x0]!, {s10-s13}\n\t"
        "vldmia %[w0]!, {s20-s23}\n\t" MCUFLOW_F32_MLA4("s24", "s1", "s2")
        "vldmia %[w1]!, {s20-s23}\n\t" MCUFLOW_F32_MLA4("s25", "s1", "s2")
        "vldmia %[w2]!, {s20-s23}\n\t" MCUFLOW_F32_MLA4("s26", "s1", "s2")
        "vldmia %[w3]!, {s20-s23}\n\t" MCUFLOW_F32_MLA4("s27", "s1", "s2")
        MCUFLOW_F32_SINGLES
        "vldmia %[x0]!, {s10}\n\t"
        "vldmia %[w0]!, {s20}\n\tvmla.f32 s24, s10, s20\n\t"
        "vldmia %[w1]!, {s20}\n\tvmla.f32 s25, s10, s20\n\t"
        "vldmia %[w2]!, {s20}\n\tvmla.f32 s26, s10, s20\n\t"
        "vldmia %[w3]!, {s20}\n\tvmla.f32 s27, s10, s20\n\t"
        MCUFLOW_F32_DONE
        "vstm %[acc], {s24-s27}"
        : [x0] "+r"(x0), [w0] "+r"(w0), [w1] "+r"(w1), [w2] "+r"(w2), [w3] "+r"(w3), [left] "+r"(left)
        : [acc] "r"(&acc[0][0])
        : "s10", "s11", "s12", "s13", "s20", "s21", "s22", "s23", "s24", "s25", "s26", "s27", "cc", "memory");
  } else {
    const float* x1 = x[1];
    asm volatile(
        "vldm %[acc], {s24-s31}\n\t"
        MCUFLOW_F32_QUADS
        "vldmia %[x0]!, {s10-s13}\n\t"
        "vldmia %[x1]!, {s0-s3}\n\t"
        "vldmia %[w0]!, {s20-s23}\n\t" MCUFLOW_F32_MLA4("s24", "s1", "s2") MCUFLOW_F32_MLA4("s28", "s", "s2")
        "vldmia %[w1]!, {s20-s23}\n\t" MCUFLOW_F32_MLA4("s25", "s1", "s2") MCUFLOW_F32_MLA4("s29", "s", "s2")
        "vldmia %[w2]!, {s20-s23}\n\t" MCUFLOW_F32_MLA4("s26", "s1", "s2") MCUFLOW_F32_MLA4("s30", "s", "s2")
        "vldmia %[w3]!, {s20-s23}\n\t" MCUFLOW_F32_MLA4("s27", "s1", "s2") MCUFLOW_F32_MLA4("s31", "s", "s2")
        MCUFLOW_F32_SINGLES
        "vldmia %[x0]!, {s10}\n\t"
        "vldmia %[x1]!, {s0}\n\t"
        "vldmia %[w0]!, {s20}\n\tvmla.f32 s24, s10, s20\n\tvmla.f32 s28, s0, s20\n\t"
        "vldmia %[w1]!, {s20}\n\tvmla.f32 s25, s10, s20\n\tvmla.f32 s29, s0, s20\n\t"
        "vldmia %[w2]!, {s20}\n\tvmla.f32 s26, s10, s20\n\tvmla.f32 s30, s0, s20\n\t"
        "vldmia %[w3]!, {s20}\n\tvmla.f32 s27, s10, s20\n\tvmla.f32 s31, s0, s20\n\t"
        MCUFLOW_F32_DONE
        "vstm %[acc], {s24-s31}"
        : [x0] "+r"(x0), [x1] "+r"(x1), [w0] "+r"(w0), [w1] "+r"(w1), [w2] "+r"(w2), [w3] "+r"(w3),
          [left] "+r"(left)
        : [acc] "r"(&acc[0][0])
        : "s0", "s1", "s2", "s3", "s10", "s11", "s12", "s13", "s20", "s21", "s22", "s23", "s24", "s25", "s26",
          "s27", "s28", "s29", "s30", "s31", "cc", "memory");
  }
#undef MCUFLOW_F32_MLA4
#undef MCUFLOW_F32_QUADS
#undef MCUFLOW_F32_SINGLES
#undef MCUFLOW_F32_DONE
}

// The reference's output stage: the bias when there is one (a missing bias adds nothing, not +0,
// which would turn a -0 sum into +0), then acc < lo ? lo : acc and acc > hi ? hi : acc.
inline float finished(float acc, const float* bias, int32_t oc, float act_min, float act_max) {
  if (bias) acc += bias[oc];
  acc = acc < act_min ? act_min : acc;
  return acc > act_max ? act_max : acc;
}

// Two-pixel passes hold the second pixel's outputs back until the pass ends (at most this many):
// a forward walk's output pixel q + 1 may lie on input pixel q (aliasing.h window_shift_below),
// which the pass's later channel blocks still read.
inline constexpr int32_t kHeldOutputs = 128;

// Every output channel of kPixels outputs (out[p]: its out_c floats; out_c <= kHeldOutputs for
// two), kChannels per pass: output p, channel oc sums x[p][i] * w[oc][at + i] over i < n for
// each run (x, at, n) that for_each_run hands to its callback, in that order (the reference's).
// The weights are rows of `depth` floats; a last, partial pass walks the last row again for its
// missing channels and stores only the channels that exist.
template <int kPixels, typename ForEachRun>
inline void all_output_channels(int32_t out_c, int32_t depth, const float* weights, const float* bias, float act_min,
                                float act_max, float* const (&out)[kPixels], ForEachRun for_each_run) {
  float held[kPixels == 2 ? kHeldOutputs : 1];
  float* stores[kPixels];
  stores[0] = out[0];
  if constexpr (kPixels == 2) stores[1] = held;
  for (int32_t oc = 0; oc < out_c; oc += kChannels) {
    float acc[kPixels][kChannels];
    for (auto& pixel : acc)  // element by element: GCC calls memset for an `= {}`, several times the cost
      for (float& a : pixel) a = 0.0f;
    const float* rows[kChannels];
    for (int32_t c = 0; c < kChannels; ++c) rows[c] = weights + (oc + c < out_c ? oc + c : out_c - 1) * depth;
    for_each_run([&](const float* const (&x)[kPixels], int32_t at, int32_t n) {
      const float* const w[kChannels] = {rows[0] + at, rows[1] + at, rows[2] + at, rows[3] + at};
      multiply_accumulate<kPixels>(acc, x, w, n);
    });
    const int32_t channels = out_c - oc < kChannels ? out_c - oc : kChannels;
    for (int p = 0; p < kPixels; ++p)
      for (int32_t c = 0; c < channels; ++c) stores[p][oc + c] = finished(acc[p][c], bias, oc + c, act_min, act_max);
  }
  if constexpr (kPixels == 2) std::memcpy(out[1], held, size_t(out_c) * sizeof(float));
}

// Rows of `depth` inputs times weight rows, two input rows per pass where out_c allows (else, and
// for an odd last row, one): row r of the walk is input row(r), its out_c outputs go to
// output + r * out_c, rows forwards.
template <typename RowInput>
inline void row_pairs(int32_t rows, int32_t out_c, int32_t depth, const float* weights, const float* bias,
                      float act_min, float act_max, float* output, RowInput row) {
  int32_t r = 0;
  for (; out_c <= kHeldOutputs && r + 2 <= rows; r += 2) {
    const float* const x[2] = {row(r), row(r + 1)};
    float* const out[2] = {output + r * out_c, output + (r + 1) * out_c};
    all_output_channels<2>(out_c, depth, weights, bias, act_min, act_max, out,
                           [&](auto run) { run(x, 0, depth); });
  }
  for (; r < rows; ++r) {
    const float* const x[1] = {row(r)};
    float* const out[1] = {output + r * out_c};
    all_output_channels<1>(out_c, depth, weights, bias, act_min, act_max, out, [&](auto run) { run(x, 0, depth); });
  }
}

}  // namespace mcuflow::kernels::dsp_f32
