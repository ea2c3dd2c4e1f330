// DSP tier (Armv7E-M / Armv8-M DSP extension: SMLAD, SXTB16 …): which ops qualify for which
// kernel, and what the compiler prepares for them (kernels/include/mcuflow/kernels/kernels_dsp.h):
// arena scratch, and depthwise weights widened to int16 by the same functions the device
// verifier checks them with.
#include <cstring>

#include "mcuflow/compiler/kernel_selection.h"
#include "mcuflow/kernels/elementwise_tiers.h"
#include "mcuflow/kernels/kernels_dsp.h"

namespace mcuflow::compiler {

std::string softmax_rejects(const LoweredProgram& p, const ProgramOp& op);  // scalar_rules.cpp
void append_softmax_exp_table(LoweredProgram& p, ProgramOp& op);          // scalar_rules.cpp
namespace {

using format::DType;
using kernels::ConvParams;
using kernels::DwConvParams;
using kernels::FcParams;

std::string size_str(int32_t h, int32_t w) { return std::to_string(h) + "x" + std::to_string(w); }

void append_scratch(LoweredProgram& p, ProgramOp& op, int32_t bytes) {
  op.inputs.push_back(add_scratch_tensor(p, p.tensors[op.outputs[0]].name + ".dsp_scratch", {bytes}));
}

// Appends the constant int32 input of `words` elements word(weights, i).
template <typename Word>
void append_prepared(LoweredProgram& p, ProgramOp& op, int32_t words, Word word) {
  const ProgramTensor& weights = p.tensors[op.inputs[1]];
  std::vector<uint8_t> bytes(size_t(words) * 4);
  for (int32_t i = 0; i < words; ++i) {
    const int32_t v = word(reinterpret_cast<const int8_t*>(weights.bytes.data()), i);
    std::memcpy(&bytes[size_t(i) * 4], &v, 4);
  }
  const std::string name = weights.name + ".dsp_prepared";
  op.inputs.push_back(add_constant_tensor(p, name, DType::kInt32, {words}, std::move(bytes)));
  op.streamed_input = int(op.inputs.size()) - 1;  // the depthwise kernels read these, not the weights
}

// --- conv_s8_1x1_dsp, conv_s8_dsp ---

std::string depth_rejects(const LoweredProgram& p, const ProgramOp& op) {
  const auto c = params_of<ConvParams>(op);
  const int64_t depth = int64_t(c.k_h) * c.k_w * c.in_c;
  if (depth < 4 || depth > kernels::kDspMaxDepth)
    return "needs a window of 4 to " + std::to_string(kernels::kDspMaxDepth) + " values, got " + std::to_string(depth);
  return needs_constant_inputs(p, op);
}

std::string pointwise_rejects(const LoweredProgram& p, const ProgramOp& op) {
  const auto c = params_of<ConvParams>(op);
  if (c.k_h != 1 || c.k_w != 1) return "needs a 1x1 kernel, got " + size_str(c.k_h, c.k_w);
  if (c.pad_top != 0 || c.pad_left != 0) return "needs no padding";
  if (c.in_c < 4 || c.in_c > kernels::kDspMaxDepth)
    return "needs 4 to " + std::to_string(kernels::kDspMaxDepth) + " input channels, got " + std::to_string(c.in_c);
  return needs_constant_inputs(p, op);
}

void conv_prepare(LoweredProgram& p, ProgramOp& op) {
  append_scratch(p, op, kernels::dsp_conv_scratch_bytes(params_of<ConvParams>(op)));
}

// --- dwconv_s8_3x3_dsp, dwconv_s8_dsp ---

std::string depthwise_rejects(const LoweredProgram& p, const ProgramOp& op) {
  const auto d = params_of<DwConvParams>(op);
  if (d.ch_mult != 1) return "needs channel multiplier 1, got " + std::to_string(d.ch_mult);
  if (int64_t(d.k_h) * d.k_w > kernels::kDspMaxTaps)
    return "needs at most " + std::to_string(kernels::kDspMaxTaps) + " taps, got " + size_str(d.k_h, d.k_w);
  return needs_constant_inputs(p, op);
}

std::string depthwise_3x3_rejects(const LoweredProgram& p, const ProgramOp& op) {
  const auto d = params_of<DwConvParams>(op);
  if (d.k_h != 3 || d.k_w != 3) return "needs a 3x3 kernel, got " + size_str(d.k_h, d.k_w);
  if (d.stride_w != 1) return "needs horizontal stride 1, got " + std::to_string(d.stride_w);
  if (d.dil_h != 1 || d.dil_w != 1) return "needs no dilation";
  return depthwise_rejects(p, op);
}

void depthwise_prepare(LoweredProgram& p, ProgramOp& op) {
  const auto d = params_of<DwConvParams>(op);
  append_prepared(p, op, kernels::dsp_dw_prepared_words(d),
                  [&](const int8_t* w, int32_t i) { return kernels::dsp_dw_prepared_word(d, w, i); });
}

void depthwise_3x3_prepare(LoweredProgram& p, ProgramOp& op) {
  const auto d = params_of<DwConvParams>(op);
  append_prepared(p, op, d.out_c * kernels::kDspDw3WeightWords,
                  [&](const int8_t* w, int32_t i) { return kernels::dsp_dw3_weight_word(d, w, i); });
  append_scratch(p, op, kernels::dsp_dw3_scratch_bytes(d));
}

// --- fc_s8_dsp ---

std::string fc_rejects(const LoweredProgram& p, const ProgramOp& op) {
  const auto f = params_of<FcParams>(op);
  if (f.in_c < 4 || f.in_c > kernels::kDspMaxDepth)
    return "needs 4 to " + std::to_string(kernels::kDspMaxDepth) + " input features, got " + std::to_string(f.in_c);
  return needs_constant_inputs(p, op);
}

void fc_prepare(LoweredProgram& p, ProgramOp& op) {
  append_scratch(p, op, kernels::dsp_fc_scratch_bytes(params_of<FcParams>(op)));
}

// --- avgpool_s8_dsp, maxpool_s8_dsp: any window, nothing prepared ---

std::string accepts_any_pool(const LoweredProgram&, const ProgramOp&) { return ""; }

// --- add_s8_dsp, mul_s8_dsp, clamp_s8_dsp, requantize_s8_dsp (every broadcast mode) ---

std::string add_rejects(const LoweredProgram&, const ProgramOp& op) {
  if (!kernels::add_tables_fit(params_of<kernels::BinaryParams>(op)))
    return "needs rescaled inputs whose doubled, left-shifted sum fits int32";
  return "";
}

void add_prepare(LoweredProgram& p, ProgramOp& op) {
  const auto b = params_of<kernels::BinaryParams>(op);
  std::vector<uint8_t> bytes(2 * kernels::kByteValues * sizeof(int32_t));
  for (int32_t i = 0; i < 2 * kernels::kByteValues; ++i) {
    const int32_t v = kernels::add_table_entry(b, i / kernels::kByteValues, i % kernels::kByteValues);
    std::memcpy(&bytes[size_t(i) * 4], &v, 4);
  }
  op.inputs.push_back(add_constant_tensor(p, p.tensors[op.outputs[0]].name + ".dsp_add_tables", DType::kInt32,
                                          {2, kernels::kByteValues}, std::move(bytes)));
}

std::string mul_rejects(const LoweredProgram&, const ProgramOp& op) {
  if (!kernels::mul_product_fits(params_of<kernels::BinaryParams>(op)))
    return "needs a product of the offset inputs whose doubled, left-shifted value fits int32";
  return "";
}

std::string accepts_all(const LoweredProgram&, const ProgramOp&) { return ""; }

}  // namespace

// requantize_s8_dsp and requantize_s8_mve: the output of every input byte (elementwise_tiers.h).
void append_requantize_table(LoweredProgram& p, ProgramOp& op) {
  const auto r = params_of<kernels::RequantizeParams>(op);
  std::vector<uint8_t> bytes(kernels::kByteValues);
  for (int32_t b = 0; b < kernels::kByteValues; ++b) bytes[size_t(b)] = uint8_t(kernels::requantize_table_entry(r, b));
  op.inputs.push_back(add_constant_tensor(p, p.tensors[op.outputs[0]].name + ".requantize_table", DType::kInt8,
                                          {kernels::kByteValues}, std::move(bytes)));
}

// Every DSP kernel needs the DSP extension's SIMD32 instructions.
constexpr CoreFeatures kDspCore = kDsp;

std::vector<TierCandidate> dsp_candidates() {
  return {
      {KernelId::conv_s8_1x1_dsp, KernelId::conv_s8, pointwise_rejects, conv_prepare,
       "1x1 conv: SMLAD, 4 pixels per weight row", kDspCore},
      {KernelId::conv_s8_dsp, KernelId::conv_s8, depth_rejects, conv_prepare,
       "conv: im2col of 4 pixels, SMLAD per weight row", kDspCore},
      {KernelId::dwconv_s8_3x3_dsp, KernelId::dwconv_s8, depthwise_3x3_rejects, depthwise_3x3_prepare,
       "depthwise 3x3: channel-major rows, SMLAD over tap pairs, 2 pixels per pass", kDspCore},
      {KernelId::dwconv_s8_dsp, KernelId::dwconv_s8, depthwise_rejects, depthwise_prepare,
       "depthwise: 4 channels per SXTAB16, SMLABB/SMLATT", kDspCore},
      {KernelId::fc_s8_dsp, KernelId::fc_s8, fc_rejects, fc_prepare, "fully connected: SMLAD, 4 rows or 2 outputs per pass", kDspCore},
      {KernelId::avgpool_s8_dsp, KernelId::avgpool_s8, accepts_any_pool, nullptr,
       "average pool: SXTAB16 window sums, 8 channels per pass in 16-bit halves, SDIV per channel", kDspCore},
      {KernelId::maxpool_s8_dsp, KernelId::maxpool_s8, accepts_any_pool, nullptr,
       "max pool: SSUB8 + SEL, 16 channels per pass", kDspCore},
      {KernelId::add_s8_dsp, KernelId::add_s8, add_rejects, add_prepare,
       "add: tabulated input rescaling, SMMLAR output requantization", kDspCore},
      {KernelId::mul_s8_dsp, KernelId::mul_s8, mul_rejects, nullptr,
       "mul: SXTAB16 offsets, SMULBB/SMULTT products, SMMLAR requantization, 4 per word", kDspCore},
      {KernelId::clamp_s8_dsp, KernelId::clamp_s8, accepts_all, nullptr, "clamp: SSUB8 + SEL, 4 per word", kDspCore},
      {KernelId::requantize_s8_dsp, KernelId::requantize_s8, accepts_all, append_requantize_table,
       "requantize: 256-entry byte table", kDspCore},
      {KernelId::softmax_s8_dsp, KernelId::softmax_s8, softmax_rejects, append_softmax_exp_table,
       "softmax: SSUB8 + SEL row max, exp table lookup, one UMLAL per output", kDspCore},
  };
}

}  // namespace mcuflow::compiler
