// DSP tier (Armv7E-M / Armv8-M DSP extension: SMLAD, SXTB16 …): which ops qualify for which
// kernel, and what the compiler prepares for them (kernels/include/mcuflow/kernels/kernels_dsp.h):
// arena scratch, and depthwise and pointwise weights widened to int16 (the pointwise kernel's with
// its requantization) by the same functions the device verifier checks them with.
#include <cstring>

#include "mcuflow/compiler/ir.h"
#include "mcuflow/compiler/kernel_selection.h"
#include "mcuflow/kernels/elementwise_tiers.h"
#include "mcuflow/kernels/kernels_dsp.h"

namespace mcuflow::compiler {

namespace {

using format::DType;
using kernels::ConvParams;
using kernels::DwConvParams;
using kernels::FcParams;
using kernels::Refusal;

std::string size_str(int32_t h, int32_t w) { return std::to_string(h) + "x" + std::to_string(w); }

std::string depth_range() { return "4 to " + std::to_string(kernels::kDspMaxDepth); }

// The reason for a refusal of these params (kernels_dsp.h states the conditions).
std::string words(Refusal r, const ConvParams& c) {
  if (r == Refusal::kKernelSize) return "needs a 1x1 kernel, got " + size_str(c.k_h, c.k_w);
  if (r == Refusal::kWindowDepth)
    return "needs a window of " + depth_range() + " values" + (c.groups > 1 ? " per group" : "") + ", got " +
           std::to_string(int64_t(c.k_h) * c.k_w * (c.in_c / c.groups));
  if (r == Refusal::kInputChannels) return "needs " + depth_range() + " input channels, got " + std::to_string(c.in_c);
  return refusal_words(r);
}
std::string words(Refusal r, const DwConvParams& d) {
  if (r == Refusal::kKernelSize) return "needs a 3x3 kernel, got " + size_str(d.k_h, d.k_w);
  if (r == Refusal::kStride) return "needs horizontal stride 1, got " + std::to_string(d.stride_w);
  if (r == Refusal::kChannelMultiplier) return "needs channel multiplier 1, got " + std::to_string(d.ch_mult);
  if (r == Refusal::kTaps)
    return "needs at most " + std::to_string(kernels::kDspMaxTaps) + " taps, got " + size_str(d.k_h, d.k_w);
  return refusal_words(r);
}
std::string words(Refusal r, const FcParams& f) {
  if (r == Refusal::kInputChannels) return "needs " + depth_range() + " input features, got " + std::to_string(f.in_c);
  return refusal_words(r);
}

void append_scratch(LoweredProgram& p, ProgramOp& op, uint8_t slot, int32_t bytes) {
  append_input(op, slot, add_scratch_tensor(p, p.tensors[op.outputs[0]].name + ".dsp_scratch", {bytes}));
}

// The constant input `slot` of an op, as the prepared words read it.
template <typename T>
const T* constant_of(const LoweredProgram& p, const ProgramOp& op, uint8_t slot) {
  return reinterpret_cast<const T*>(p.tensors[op.inputs[slot]].bytes.data());
}

// Appends a kernel's prepared input at `slot`, constant int32 holding the words walk(emit) hands
// to emit in order (the walk the load-time check compares with), which it reads instead of the
// weights.
template <typename Walk>
void append_prepared(LoweredProgram& p, ProgramOp& op, uint8_t slot, Walk walk) {
  std::vector<uint8_t> bytes;
  walk([&bytes](int32_t v) {
    bytes.resize(bytes.size() + 4);
    std::memcpy(&bytes[bytes.size() - 4], &v, 4);
    return true;
  });
  // A 1x1 conv of 192 -> 1024 channels (ShuffleNetV2's last) widens to more words than one dim holds.
  const int32_t words = int32_t(bytes.size() / 4);
  const std::vector<int32_t> dims = table_dims(words);
  const std::string name = p.tensors[op.inputs[kernels::kWeightsSlot]].name + ".dsp_prepared";
  if (dims.empty())
    throw CompileError("internal: " + name + " of " + std::to_string(words) + " words has no shape within " +
                       std::to_string(format::kMaxDim) + " per dimension; please report it");
  append_input(op, slot, add_constant_tensor(p, name, DType::kInt32, dims, std::move(bytes)));
  op.streamed_input = slot;
}

// --- conv_s8_1x1_dsp, conv_s8_dsp ---

void conv_prepare(LoweredProgram& p, ProgramOp& op) {
  append_scratch(p, op, kernels::kDspConvScratchSlot, kernels::dsp_conv_scratch_bytes(params_of<ConvParams>(op)));
}

void pointwise_prepare(LoweredProgram& p, ProgramOp& op) {
  const auto c = params_of<ConvParams>(op);
  append_scratch(p, op, kernels::kDspConvScratchSlot, kernels::dsp_pw_scratch_bytes(c));
  const kernels::ConvTables t{constant_of<int8_t>(p, op, kernels::kWeightsSlot),
                              constant_of<int32_t>(p, op, kernels::kBiasSlot),
                              constant_of<int32_t>(p, op, kernels::kMultipliersSlot),
                              constant_of<int32_t>(p, op, kernels::kShiftsSlot)};
  append_prepared(p, op, kernels::kDspPwPreparedSlot, [&](auto emit) { kernels::dsp_pw_walk_prepared(c, t, emit); });
}

// --- dwconv_s8_3x3_dsp, dwconv_s8_dsp ---

void depthwise_prepare(LoweredProgram& p, ProgramOp& op) {
  const auto d = params_of<DwConvParams>(op);
  const int8_t* weights = constant_of<int8_t>(p, op, kernels::kWeightsSlot);
  append_prepared(p, op, kernels::kDspDwPreparedSlot, [&](auto emit) {
    for (int32_t i = 0; i < kernels::dsp_dw_prepared_words(d); ++i) emit(kernels::dsp_dw_prepared_word(d, weights, i));
  });
}

void depthwise_3x3_prepare(LoweredProgram& p, ProgramOp& op) {
  const auto d = params_of<DwConvParams>(op);
  append_prepared(p, op, kernels::kDspDwPreparedSlot, [&](auto emit) {
    kernels::dsp_dw3_walk_prepared(d, constant_of<int8_t>(p, op, kernels::kWeightsSlot), emit);
  });
  append_scratch(p, op, kernels::kDspDw3ScratchSlot, kernels::dsp_dw3_scratch_bytes(d));
}

// --- conv_s8_w4_1x1_dsp, conv_s8_w4_dsp, dwconv_s8_w4_dsp, fc_s8_w4_dsp: their scratch alone ---

template <typename P, int32_t (*kScratchBytes)(const P&)>
void w4_prepare(LoweredProgram& p, ProgramOp& op) {
  append_input(op, kernels::kDspW4ScratchSlot,
               add_scratch_tensor(p, p.tensors[op.outputs[0]].name + ".dsp_scratch",
                                  {kScratchBytes(params_of<P>(op)) / 16, 16}));
}

// --- fc_s8_dsp ---

void fc_prepare(LoweredProgram& p, ProgramOp& op) {
  append_scratch(p, op, kernels::kDspFcScratchSlot, kernels::dsp_fc_scratch_bytes(params_of<FcParams>(op)));
}

// --- conv_s16_1x1_dsp, conv_s16_dsp, fc_s16_dsp (dwconv_s16_dsp, avgpool_s16_dsp: nothing prepared) ---

void conv_s16_prepare(LoweredProgram& p, ProgramOp& op) {
  append_scratch(p, op, kernels::kDspS16ScratchSlot, kernels::dsp_conv_scratch_bytes(params_of<ConvParams>(op)));
}

void fc_s16_prepare(LoweredProgram& p, ProgramOp& op) {
  append_scratch(p, op, kernels::kDspS16ScratchSlot, kernels::dsp_s16_fc_scratch_bytes(params_of<FcParams>(op)));
}

// avgpool_s8_dsp, maxpool_s8_dsp, clamp_s8_dsp, requantize_s8_dsp, lut_s8_dsp: any such op;
// reduce_s8_dsp: a sum or a mean (tier_contract.h).

// --- add_s8_dsp, mul_s8_dsp (every broadcast mode) ---

void add_prepare(LoweredProgram& p, ProgramOp& op) {
  const auto b = params_of<kernels::BinaryParams>(op);
  append_table<int32_t>(p, op, kernels::kAddTablesSlot, ".dsp_add_tables", DType::kInt32, {2, kernels::kByteValues},
                        [&b](int32_t i) {
                          return kernels::add_table_entry(b, i / kernels::kByteValues, i % kernels::kByteValues);
                        });
}

}  // namespace

// requantize_s8_dsp and requantize_s8_mve: the output of every input byte (elementwise_tiers.h).
void append_requantize_table(LoweredProgram& p, ProgramOp& op) {
  const auto r = params_of<kernels::RequantizeParams>(op);
  append_table<int8_t>(p, op, kernels::kRequantizeTableSlot, ".requantize_table", DType::kInt8, {kernels::kByteValues},
                       [&r](int32_t i) { return kernels::requantize_table_entry(r, i); });
}

// Every DSP kernel needs the DSP extension's SIMD32 instructions.
constexpr CoreFeatures kDspCore = kDsp;
// The float kernels (DSP-tier cores' kernels) need the single-precision FPU (VLDM, VMLA.F32).
constexpr CoreFeatures kDspFloatCore = kDspCore | kFpu;

std::vector<TierCandidate> dsp_candidates() {
  return {
      {KernelId::conv_s8_1x1_dsp, KernelId::conv_s8, weighted_rejects<ConvParams, kernels::conv_s8_1x1_dsp_refusal, words>,
       pointwise_prepare, "1x1 conv: widened weights, 2 pixels x 2 channels per SMLAD step", kDspCore},
      {KernelId::conv_s8_dsp, KernelId::conv_s8, weighted_rejects<ConvParams, kernels::conv_s8_dsp_refusal, words>, conv_prepare,
       "conv: im2col of 4 pixels, SMLAD per weight row", kDspCore},
      {KernelId::dwconv_s8_3x3_dsp, KernelId::dwconv_s8,
       weighted_rejects<DwConvParams, kernels::dwconv_s8_3x3_dsp_refusal, words>, depthwise_3x3_prepare,
       "depthwise 3x3: channel-major rows, SMLAD over tap pairs, 2 pixels per pass", kDspCore},
      {KernelId::dwconv_s8_dsp, KernelId::dwconv_s8, weighted_rejects<DwConvParams, kernels::dwconv_s8_dsp_refusal, words>, depthwise_prepare,
       "depthwise: 4 channels per SXTAB16, SMLABB/SMLATT", kDspCore},
      {KernelId::fc_s8_dsp, KernelId::fc_s8, weighted_rejects<FcParams, kernels::fc_s8_dsp_refusal, words>, fc_prepare,
       "fully connected: SMLAD, 4 rows or 2 outputs per pass", kDspCore},
      {KernelId::conv_s8_w4_1x1_dsp, KernelId::conv_s8_w4,
       weighted_rejects<ConvParams, kernels::conv_s8_w4_1x1_dsp_refusal, words>,
       w4_prepare<ConvParams, kernels::dsp_conv_w4_scratch_bytes>,
       "1x1 conv, int4 weights: unpacked into the scratch, then the int8 SMLAD kernel", kDspCore},
      {KernelId::conv_s8_w4_dsp, KernelId::conv_s8_w4, weighted_rejects<ConvParams, kernels::conv_s8_w4_dsp_refusal, words>,
       w4_prepare<ConvParams, kernels::dsp_conv_w4_scratch_bytes>,
       "conv, int4 weights: unpacked into the scratch, then the int8 im2col SMLAD kernel", kDspCore},
      {KernelId::dwconv_s8_w4_dsp, KernelId::dwconv_s8_w4,
       weighted_rejects<DwConvParams, kernels::dwconv_s8_w4_dsp_refusal, words>,
       w4_prepare<DwConvParams, kernels::dsp_dw_w4_scratch_bytes>,
       "depthwise, int4 weights: the int8 SXTAB16 kernel's widened weights built in the scratch", kDspCore},
      {KernelId::fc_s8_w4_dsp, KernelId::fc_s8_w4, weighted_rejects<FcParams, kernels::fc_s8_w4_dsp_refusal, words>,
       w4_prepare<FcParams, kernels::dsp_fc_w4_scratch_bytes>,
       "fully connected, int4 weights: unpacked into the scratch, then the int8 SMLAD kernel", kDspCore},
      {KernelId::avgpool_s8_dsp, KernelId::avgpool_s8, accepts_any, nullptr,
       "average pool: SXTAB16 window sums, 8 channels per pass in 16-bit halves, SDIV per channel", kDspCore},
      {KernelId::maxpool_s8_dsp, KernelId::maxpool_s8, accepts_any, nullptr,
       "max pool: SSUB8 + SEL, 16 channels per pass", kDspCore},
      {KernelId::reduce_s8_dsp, KernelId::reduce_s8, params_rejects<kernels::ReduceParams, kernels::reduce_sum_refusal>,
       nullptr, "sum / mean: SXTAB16 column sums, 16 channels per pass in 16-bit halves, SMMLAR outputs", kDspCore},
      {KernelId::add_s8_dsp, KernelId::add_s8, params_rejects<kernels::BinaryParams, kernels::add_s8_dsp_refusal>, add_prepare,
       "add: tabulated input rescaling, SMMLAR output requantization", kDspCore},
      {KernelId::mul_s8_dsp, KernelId::mul_s8, params_rejects<kernels::BinaryParams, kernels::mul_s8_dsp_refusal>, nullptr,
       "mul: SXTAB16 offsets, SMULBB/SMULTT products, SMMLAR requantization, 4 per word", kDspCore},
      {KernelId::clamp_s8_dsp, KernelId::clamp_s8, accepts_any, nullptr, "clamp: SSUB8 + SEL, 4 per word", kDspCore},
      {KernelId::requantize_s8_dsp, KernelId::requantize_s8, accepts_any, append_requantize_table,
       "requantize: 256-entry byte table", kDspCore},
      {KernelId::lut_s8_dsp, KernelId::lut_s8, accepts_any, nullptr,
       "table-lookup activation: four bytes per word", kDspCore},
      {KernelId::softmax_s8_dsp, KernelId::softmax_s8, accepts_any, append_softmax_exp_table,
       "softmax: SSUB8 + SEL row max, exp table lookup, one UMLAL per output", kDspCore},
      {KernelId::conv_s16_1x1_dsp, KernelId::conv_s16,
       weighted_rejects<ConvParams, kernels::conv_s16_1x1_dsp_refusal, words>, conv_s16_prepare,
       "int16 1x1 conv: SMLAD on input pairs, 4 pixels per weight row, SMMLAR output", kDspCore},
      {KernelId::conv_s16_dsp, KernelId::conv_s16, weighted_rejects<ConvParams, kernels::conv_s16_dsp_refusal, words>,
       conv_s16_prepare, "int16 conv: im2col of 4 pixels, SMLAD per weight row, SMMLAR output", kDspCore},
      {KernelId::dwconv_s16_dsp, KernelId::dwconv_s16,
       weighted_rejects<DwConvParams, kernels::dwconv_s16_dsp_refusal, words>, nullptr,
       "int16 depthwise: 4 channels per tap, SXTB16 weights, SMLAxy", kDspCore},
      {KernelId::fc_s16_dsp, KernelId::fc_s16, weighted_rejects<FcParams, kernels::fc_s16_dsp_refusal, words>,
       fc_s16_prepare, "int16 fully connected: SMLAD, 4 rows per weight row, SMMLAR output", kDspCore},
      {KernelId::avgpool_s16_dsp, KernelId::avgpool_s16,
       params_rejects<kernels::PoolParams, kernels::avgpool_s16_dsp_refusal>, nullptr,
       "int16 average pool: int32 window sums, 4 channels per pass", kDspCore},
      // Float layers on cores with an FPU (nothing prepared); MVE cores run their float vectors.
      {KernelId::conv_f32_1x1_dsp, KernelId::conv_f32, params_rejects<ConvParams, kernels::pointwise_refusal>,
       nullptr, "float 1x1 conv: 2 pixels x 4 channels per pass, VLDM + VMLA.F32 in the reference's order",
       kDspFloatCore, kMveF},
      {KernelId::conv_f32_dsp, KernelId::conv_f32, params_rejects<ConvParams, kernels::ungrouped_refusal>, nullptr,
       "float conv: 4 channels (x 2 pixels of equal taps) per pass, VLDM + VMLA.F32 in the reference's order",
       kDspFloatCore, kMveF},
      {KernelId::dwconv_f32_dsp, KernelId::dwconv_f32, params_rejects<DwConvParams, kernels::unit_multiplier_refusal>,
       nullptr, "float depthwise conv: 8 channels per pass, VLDM + VMLA.F32 in the reference's order", kDspFloatCore,
       kMveF},
      {KernelId::fc_f32_dsp, KernelId::fc_f32, accepts_any, nullptr,
       "float linear: 2 rows x 4 channels per pass, VLDM + VMLA.F32 in the reference's order", kDspFloatCore, kMveF},
      {KernelId::concat_slice_s8_dsp, KernelId::concat_slice_s8, accepts_any, append_concat_table,
       "cat slice: rows moved two words per step, requantized by a 256-entry table a word at a time", kDspCore},
      {KernelId::strided_copy_b8_dsp, KernelId::strided_copy_b8, accepts_any, nullptr,
       "strided copy: unit-step rows moved two words per step, fills as words", kDspCore},
      // int16 table activations and softmax: the reference's tables, nothing prepared.
      {KernelId::lut_s16_dsp, KernelId::lut_s16, accepts_any, nullptr,
       "int16 table activation: neighbouring entries as one word, one SMLAD blend", kDspCore},
      {KernelId::softmax_s16_dsp, KernelId::softmax_s16, accepts_any, nullptr,
       "int16 softmax: exp entries as one word, one SMLAD blend", kDspCore},
      {KernelId::permute_b8_dsp, KernelId::permute_b8, accepts_any, nullptr,
       "byte permute: contiguous rows by unaligned words, others four gathered bytes per step", kDspCore},
      {KernelId::quantize_f32_s8_dsp, KernelId::quantize_f32_s8, accepts_any, nullptr,
       "quantize: VDIV, round half away from VCVT's truncation and the exact fraction", kDspFloatCore, kMveF},
      {KernelId::dequantize_s8_f32_dsp, KernelId::dequantize_s8_f32, accepts_any, append_dequantize_table,
       "dequantize: the 256 outputs' table looked up per element, four input bytes per word", kDspCore, kMveF},
  };
}

}  // namespace mcuflow::compiler
