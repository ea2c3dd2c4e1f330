// MVE tier (Helium, Armv8.1-M): which ops qualify for which kernel, and what the compiler
// precomputes for them: the prepared input of kernels/include/mcuflow/kernels/kernels_mve.h
// (the same functions build it here and verify it on the device), plus the GEMM kernels'
// arena scratch.
#include <cstring>

#include "mcuflow/compiler/kernel_selection.h"
#include "mcuflow/kernels/kernels_mve.h"

namespace mcuflow::compiler {

namespace {

using format::DType;
using kernels::ConvParams;
using kernels::DwConvParams;
using kernels::FcParams;
using kernels::Refusal;

template <typename T>
std::vector<T> input_values(const LoweredProgram& p, const ProgramOp& op, int slot) {
  const ProgramTensor& t = p.tensors[op.inputs[slot]];
  std::vector<T> v(t.bytes.size() / sizeof(T));
  std::memcpy(v.data(), t.bytes.data(), v.size() * sizeof(T));
  return v;
}

std::string size_str(int32_t h, int32_t w) { return std::to_string(h) + "x" + std::to_string(w); }

// The reason for a refusal of these params (kernels_mve.h states the conditions).
std::string words(Refusal r, const ConvParams& c) {
  if (r == Refusal::kKernelSize) return "needs a 1x1 kernel, got " + size_str(c.k_h, c.k_w);
  if (r == Refusal::kOutputChannels)
    return "needs at most " + std::to_string(kernels::kMvePointwiseMaxOutC) + " output channels, got " +
           std::to_string(c.out_c);
  if (r == Refusal::kWindowDepth)
    return "needs k_h*k_w*in_c <= " + std::to_string(kernels::kMveMaxDepth) + ", got " +
           std::to_string(int64_t(c.k_h) * c.k_w * c.in_c);
  return refusal_words(r);
}
// conv_s16_mve gathers its window on the stack: a smaller depth.
std::string s16_words(Refusal r, const ConvParams& c) {
  if (r == Refusal::kWindowDepth)
    return "needs k_h*k_w*in_c <= " + std::to_string(kernels::kMveS16ConvMaxDepth) + ", got " +
           std::to_string(int64_t(c.k_h) * c.k_w * c.in_c);
  return words(r, c);
}
std::string words(Refusal r, const DwConvParams& d) {
  if (r == Refusal::kChannelMultiplier) return "needs channel multiplier 1, got " + std::to_string(d.ch_mult);
  if (r == Refusal::kTaps)
    return "needs at most " + std::to_string(kernels::kMveDwMaxTaps) + " taps, got " + size_str(d.k_h, d.k_w);
  return refusal_words(r);
}
std::string words(Refusal r, const kernels::QuantizeParams&) {
  if (r == Refusal::kScale) return "needs a normal scale (MVE flushes denormal products to zero)";
  return refusal_words(r);
}

// Appends the prepared input of `layout`, as [blocks][block bytes / 16][16] int8.
template <typename Layout>
void append_prepared_input(LoweredProgram& p, ProgramOp& op, const Layout& layout, int32_t input_offset,
                           bool per_channel_requant) {
  const std::vector<int8_t> weights = input_values<int8_t>(p, op, kernels::kWeightsSlot);
  const std::vector<int32_t> bias = input_values<int32_t>(p, op, kernels::kBiasSlot),
                             multipliers = input_values<int32_t>(p, op, kernels::kMultipliersSlot),
                             shifts = input_values<int32_t>(p, op, kernels::kShiftsSlot);
  const kernels::MveReferenceInputs reference{weights.data(), bias.data(), multipliers.data(), shifts.data(),
                                              per_channel_requant, input_offset};
  std::vector<uint8_t> bytes;
  bytes.reserve(size_t(layout.total_bytes()));
  kernels::mve_emit_prepared(layout, reference, [&](uint8_t byte) {
    bytes.push_back(byte);
    return true;
  });
  append_input(op, kernels::kMvePreparedSlot,
               add_constant_tensor(p, p.tensors[op.inputs[kernels::kWeightsSlot]].name + ".mve", DType::kInt8,
                                   {layout.blocks(), layout.total_bytes() / (16 * layout.blocks()), 16},
                                   std::move(bytes)));
}

// Appends an arena tensor of `bytes` (even) the op alone uses, so the planner gives it the op's
// lifetime; as two rows, each within the format's limit per dimension for depths up to kMveMaxDepth.
void append_scratch(LoweredProgram& p, ProgramOp& op, int32_t bytes) {
  append_input(op, kernels::kMveScratchSlot,
               add_scratch_tensor(p, p.tensors[op.inputs[kernels::kWeightsSlot]].name + ".mve_scratch", {2, bytes / 2}));
}

// The int4-weight kernels' scratch (kernels_mve.h: whole chunks of 16), as [bytes / 16][16].
void append_w4_scratch(LoweredProgram& p, ProgramOp& op, int32_t bytes) {
  append_input(op, kernels::kMveW4ScratchSlot,
               add_scratch_tensor(p, p.tensors[op.inputs[kernels::kWeightsSlot]].name + ".mve_scratch",
                                  {bytes / 16, 16}));
}

// --- conv_s8_1x1_mve ---

void pointwise_prepare(LoweredProgram& p, ProgramOp& op) {
  const auto c = params_of<ConvParams>(op);
  append_prepared_input(p, op, kernels::MvePointwiseLayout{c.in_c, c.out_c}, c.input_offset, true);
  append_scratch(p, op, kernels::mve_pointwise_pair_bytes(c.in_c));
  op.streamed_input = kernels::kMvePreparedSlot;  // its weights are in the prepared input
}

// --- conv_s8_mve ---

void conv_prepare(LoweredProgram& p, ProgramOp& op) {
  const auto c = params_of<ConvParams>(op);
  append_prepared_input(p, op, kernels::mve_conv_gemm_layout(c), c.input_offset, true);
  append_scratch(p, op, kernels::mve_conv_scratch_bytes(c));
}

// --- dwconv_s8_mve ---

std::string dwconv_rejects(const LoweredProgram& p, const ProgramOp& op) {
  const std::string refused = weighted_rejects<DwConvParams, kernels::dwconv_s8_mve_refusal, words>(p, op);
  if (!refused.empty()) return refused;
  const std::vector<int8_t> weights = input_values<int8_t>(p, op, kernels::kWeightsSlot);
  if (!kernels::mve_dw_weights_supported(weights.data(), uint32_t(weights.size()))) return "needs weights in [-127, 127]";
  return "";
}

void dwconv_prepare(LoweredProgram& p, ProgramOp& op) {
  const auto c = params_of<DwConvParams>(op);
  append_prepared_input(p, op, kernels::MveDwLayout{c.in_c, c.k_h * c.k_w}, c.input_offset, true);
  op.streamed_input = kernels::kMvePreparedSlot;  // its weights are in the prepared input
}

// --- fc_s8_mve ---

void fc_prepare(LoweredProgram& p, ProgramOp& op) {
  const auto f = params_of<FcParams>(op);
  append_prepared_input(p, op, kernels::MveGemmLayout{f.in_c, f.out_c}, f.input_offset, f.per_channel == 1);
  if (f.rows > 1) append_scratch(p, op, kernels::mve_pair_bytes(f.in_c));
}

// --- conv_s8_w4_1x1_mve, conv_s8_w4_mve, dwconv_s8_w4_mve, fc_s8_w4_mve: their scratch alone ---

template <typename P, int32_t (*kScratchBytes)(const P&)>
void w4_prepare(LoweredProgram& p, ProgramOp& op) {
  append_w4_scratch(p, op, kScratchBytes(params_of<P>(op)));
}

// add_s8_mve, mul_s8_mve (every broadcast mode), clamp_s8_mve, avgpool_s8_mve, maxpool_s8_mve,
// quantize_f32_s8_mve, lut_s8_mve: any such op, nothing prepared; reduce_s8_mve: a sum or a mean
// (tier_contract.h), nothing prepared; requantize_s8_mve: the DSP tier's byte
// table (dsp_rules.cpp); dequantize_s8_f32_mve, conv_f32_mve, dwconv_f32_mve, fc_f32_mve: nothing prepared.

}  // namespace

// Every MVE kernel needs Helium's integer vectors; the I/O quantization kernels also float vectors
// (VRINTA, VCVT, VMUL on float32 lanes) and the FPU (quantize divides lane by lane).
constexpr CoreFeatures kMveCore = kMve;

std::vector<TierCandidate> mve_candidates() {
  return {
      {KernelId::conv_s8_1x1_mve, KernelId::conv_s8, weighted_rejects<ConvParams, kernels::conv_s8_1x1_mve_refusal, words>,
       pointwise_prepare,
       "1x1 conv: MVE GEMM, VMLADAVA over 2 pixels x 4 channels x 16 inputs, weights laid out for the loop", kMveCore},
      {KernelId::conv_s8_mve, KernelId::conv_s8, weighted_rejects<ConvParams, kernels::conv_s8_mve_refusal, words>, conv_prepare,
       "conv: im2col rows + MVE GEMM, VMLADAV over 2 windows x 4 channels x 16 taps", kMveCore},
      {KernelId::dwconv_s8_mve, KernelId::dwconv_s8, dwconv_rejects, dwconv_prepare,
       "depthwise conv: MVE, 16 channels per VMULL pair", kMveCore},
      {KernelId::fc_s8_mve, KernelId::fc_s8, needs_constant_inputs, fc_prepare,
       "linear: MVE GEMM, VMLADAV over 2 rows x 4 channels x 16 inputs", kMveCore},
      {KernelId::conv_s8_w4_1x1_mve, KernelId::conv_s8_w4,
       weighted_rejects<ConvParams, kernels::conv_s8_w4_1x1_mve_refusal, words>,
       w4_prepare<ConvParams, kernels::mve_conv_w4_1x1_scratch_bytes>,
       "1x1 conv, int4 weights: unpacked (VST2) with channel tables into the scratch, then the int8 MVE GEMM",
       kMveCore},
      {KernelId::conv_s8_w4_mve, KernelId::conv_s8_w4, weighted_rejects<ConvParams, kernels::conv_s8_w4_mve_refusal, words>,
       w4_prepare<ConvParams, kernels::mve_conv_w4_scratch_bytes>,
       "conv, int4 weights: unpacked (VST2) with channel tables into the scratch, then the int8 MVE im2col GEMM",
       kMveCore},
      {KernelId::dwconv_s8_w4_mve, KernelId::dwconv_s8_w4,
       weighted_rejects<DwConvParams, kernels::dwconv_s8_w4_mve_refusal, words>,
       w4_prepare<DwConvParams, kernels::mve_dw_w4_scratch_bytes>,
       "depthwise conv, int4 weights: the int8 MVE kernel's prepared input built in the scratch", kMveCore},
      {KernelId::fc_s8_w4_mve, KernelId::fc_s8_w4,
       weighted_rejects<FcParams, kernels::fc_s8_w4_mve_refusal, plain_words<FcParams>>,
       w4_prepare<FcParams, kernels::mve_fc_w4_scratch_bytes>,
       "linear, int4 weights: unpacked (VST2) with channel tables into the scratch, then the int8 MVE GEMM",
       kMveCore},
      {KernelId::conv_s16_1x1_mve, KernelId::conv_s16,
       weighted_rejects<ConvParams, kernels::conv_s16_1x1_mve_refusal, words>, nullptr,
       "1x1 conv int16: MVE VMLADAV over 4 channels x 8 inputs (int32 where provably exact, else VMLALDAV)", kMveCore},
      {KernelId::conv_s16_mve, KernelId::conv_s16, weighted_rejects<ConvParams, kernels::conv_s16_mve_refusal, s16_words>,
       nullptr, "conv int16: stack im2col row + MVE VMLADAV over 4 channels x 8 taps", kMveCore},
      {KernelId::dwconv_s16_mve, KernelId::dwconv_s16,
       weighted_rejects<DwConvParams, kernels::dwconv_s16_mve_refusal, words>, nullptr,
       "depthwise conv int16: MVE, 4 channels per int32 vector, exact VRMULH output stage", kMveCore},
      {KernelId::fc_s16_mve, KernelId::fc_s16, needs_constant_inputs, nullptr,
       "linear int16: MVE VMLADAV over 4 channels x 8 inputs (int32 where provably exact, else VMLALDAV)", kMveCore},
      {KernelId::avgpool_s16_mve, KernelId::avgpool_s16,
       params_rejects<kernels::PoolParams, kernels::avgpool_s16_mve_refusal>, nullptr,
       "average pool int16: MVE window sums over 4 channels in int32 lanes, the reference's rounded division",
       kMveCore},
      {KernelId::add_s8_mve, KernelId::add_s8, accepts_any, nullptr, "add: MVE, four int32 lanes per step", kMveCore},
      {KernelId::avgpool_s8_mve, KernelId::avgpool_s8, accepts_any, nullptr,
       "average pool: MVE window sums over 32 channels in int16 lanes, exact reciprocal multiply (VMULH)", kMveCore},
      {KernelId::maxpool_s8_mve, KernelId::maxpool_s8, accepts_any, nullptr,
       "max pool: MVE VMAX over 64 channels per pass, tail-predicated", kMveCore},
      {KernelId::reduce_s8_mve, KernelId::reduce_s8, params_rejects<kernels::ReduceParams, kernels::reduce_sum_refusal>,
       nullptr, "sum / mean: MVE column sums over 32 channels in int16 lanes (inner 1: VADDVA rows), VQRDMULH outputs",
       kMveCore},
      {KernelId::mul_s8_mve, KernelId::mul_s8, accepts_any, nullptr, "mul: MVE, four int32 lanes per step", kMveCore},
      {KernelId::clamp_s8_mve, KernelId::clamp_s8, accepts_any, nullptr, "clamp: MVE VMAX/VMIN, 16 per step", kMveCore},
      {KernelId::requantize_s8_mve, KernelId::requantize_s8, accepts_any, append_requantize_table,
       "requantize: 256-entry byte table, MVE gather of 16 per step", kMveCore},
      {KernelId::lut_s8_mve, KernelId::lut_s8, accepts_any, nullptr,
       "table-lookup activation: MVE gather of 16 per step", kMveCore},
      {KernelId::softmax_s8_mve, KernelId::softmax_s8, accepts_any, append_softmax_exp_table,
       "softmax: MVE VMAXV row max, exp table gathered 4 per step, VQRDMULH + VRSHL outputs", kMveCore},
      {KernelId::quantize_f32_s8_mve, KernelId::quantize_f32_s8, accepts_any, nullptr,
       "quantize: FPU division per lane, MVE VRINTA, zero point and clamp, 4 per step", kMveCore | kMveF | kFpu},
      {KernelId::dequantize_s8_f32_mve, KernelId::dequantize_s8_f32,
       params_rejects<kernels::QuantizeParams, kernels::dequantize_s8_f32_mve_refusal, words>, nullptr,
       "dequantize: MVE VCVT and VMUL, 4 per step", kMveCore | kMveF},
      // Float layers: weights may be any tensors (nothing prepared); the kernels scan their
      // operands' magnitudes and run the reference wherever flush-to-zero could differ.
      {KernelId::conv_f32_mve, KernelId::conv_f32, params_rejects<ConvParams, kernels::ungrouped_refusal>, nullptr,
       "float conv: MVE, 8 output channels per pass, weights gathered, VMUL + VADD in the reference's order",
       kMveCore | kMveF},
      {KernelId::dwconv_f32_mve, KernelId::dwconv_f32, params_rejects<DwConvParams, kernels::unit_multiplier_refusal>,
       nullptr, "float depthwise conv: MVE, 8 channels per pass, VMUL + VADD in the reference's order",
       kMveCore | kMveF},
      {KernelId::fc_f32_mve, KernelId::fc_f32, accepts_any, nullptr,
       "float linear: MVE, 8 output channels per pass, weights gathered, VMUL + VADD in the reference's order",
       kMveCore | kMveF},
      {KernelId::concat_slice_s8_mve, KernelId::concat_slice_s8, accepts_any, append_concat_table,
       "cat slice: MVE VLDRB/VSTRB of 16 per step, predicated tail; requantized by a byte gather of 16 per step",
       kMveCore},
      {KernelId::strided_copy_b8_mve, KernelId::strided_copy_b8, accepts_any, nullptr,
       "strided copy: unit-step rows and fills by MVE VLDRB/VSTRB of 16 per step, predicated tail", kMveCore},
      // int16 table activations and softmax: the reference's tables, nothing prepared.
      {KernelId::lut_s16_mve, KernelId::lut_s16, accepts_any, nullptr,
       "int16 table activation: both neighbouring entries gathered, 4 per step", kMveCore},
      {KernelId::softmax_s16_mve, KernelId::softmax_s16, accepts_any, nullptr,
       "int16 softmax: VMAXV row max, exp entries gathered 4 per step, VRSHL outputs", kMveCore},
      {KernelId::permute_b8_mve, KernelId::permute_b8, accepts_any, nullptr,
       "byte permute: contiguous rows by VLDRB/VSTRB, others by VLDRB gathers of 16, 8 or 4 offsets", kMveCore},
  };
}

}  // namespace mcuflow::compiler
