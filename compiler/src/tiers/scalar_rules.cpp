// Scalar tier (Armv6-M Thumb-1, kernels_scalar.h): which ops qualify for which kernel, and the
// constant input the compiler prepares for them with the functions the device verifier
// recomputes it with (folded bias, requantization words, weights), and for im2col convs an arena scratch
// holding one output pixel's window.
#include <cstring>

#include "mcuflow/compiler/kernel_selection.h"
#include "mcuflow/kernels/kernels_scalar.h"
#include "mcuflow/kernels/softmax_table.h"

namespace mcuflow::compiler {
namespace {

using format::DType;
using kernels::ConvParams;
using kernels::DwConvParams;
using kernels::FcParams;
using kernels::Refusal;

// The constant int32 input in `slot` (bias, multipliers, shifts).
const int32_t* table(const LoweredProgram& p, const ProgramOp& op, int slot) {
  return reinterpret_cast<const int32_t*>(p.tensors[op.inputs[slot]].bytes.data());
}

// Appends the prepared input, constant int32 of `words` elements word(i) (table_dims(words) is
// not empty).
template <typename Word>
void append_prepared(LoweredProgram& p, ProgramOp& op, const std::string& name, int32_t words, Word word) {
  std::vector<uint8_t> bytes(size_t(words) * 4);
  for (int32_t i = 0; i < words; ++i) {
    const int32_t v = word(i);
    std::memcpy(&bytes[size_t(i) * 4], &v, 4);
  }
  append_input(op, kernels::kScalarPreparedSlot,
               add_constant_tensor(p, name, DType::kInt32, table_dims(words), std::move(bytes)));
  op.streamed_input = kernels::kScalarPreparedSlot;  // the scalar kernels read their weights here
}

// Appends a weighted kernel's prepared input of `words` words, word(weights, bias, multipliers, shifts, i)
// (kernels_scalar.h).
template <typename Word>
void append_gemm_prepared(LoweredProgram& p, ProgramOp& op, int32_t words, Word word) {
  const ProgramTensor& weights = p.tensors[op.inputs[kernels::kWeightsSlot]];
  const auto* w = reinterpret_cast<const int8_t*>(weights.bytes.data());
  const int32_t *bias = table(p, op, kernels::kBiasSlot), *multipliers = table(p, op, kernels::kMultipliersSlot),
                *shifts = table(p, op, kernels::kShiftsSlot);
  append_prepared(p, op, weights.name + ".scalar_prepared", words,
                  [&](int32_t i) { return word(w, bias, multipliers, shifts, i); });
}

// Why a prepared input of `words` words cannot be stored, or "".
std::string prepared_table_rejects(int32_t words) {
  if (!table_dims(words).empty()) return "";
  return "its prepared table of " + std::to_string(words) + " words has no shape within " +
         std::to_string(format::kMaxDim) + " per dimension";
}

// --- conv_s8_1x1_scalar, conv_s8_scalar ---

// The GEMM kernels' constant inputs, and weights in -127..127 for their packed sums
// (kernels_scalar.h).
// `weights` int8 weights, `words` prepared words.
std::string gemm_rejects(const LoweredProgram& p, const ProgramOp& op, int32_t weights, int32_t words) {
  const std::string constants = needs_constant_inputs(p, op);
  if (!constants.empty()) return constants;
  const ProgramTensor& w = p.tensors[op.inputs[kernels::kWeightsSlot]];
  if (!kernels::scalar_weights_symmetric(reinterpret_cast<const int8_t*>(w.bytes.data()), weights))
    return "needs weights in -127..127";
  return prepared_table_rejects(words);
}

std::string conv_rejects(const LoweredProgram& p, const ProgramOp& op) {
  const auto c = params_of<ConvParams>(op);
  return gemm_rejects(p, op, c.out_c * kernels::scalar_conv_depth(c), kernels::scalar_conv_prepared_words(c));
}

std::string size_str(int32_t h, int32_t w) { return std::to_string(h) + "x" + std::to_string(w); }

// The reason for a refusal of these params (kernels_scalar.h states the conditions).
std::string words(Refusal r, const ConvParams& c) {
  return r == Refusal::kKernelSize ? "needs a 1x1 kernel, got " + size_str(c.k_h, c.k_w) : refusal_words(r);
}
std::string words(Refusal r, const DwConvParams& d) {
  if (r == Refusal::kKernelSize) return "needs a 3x3 kernel, got " + size_str(d.k_h, d.k_w);
  if (r == Refusal::kChannelMultiplier) return "needs channel multiplier 1, got " + std::to_string(d.ch_mult);
  return refusal_words(r);
}
std::string words(Refusal r, const kernels::PoolParams& pool) {
  if (r == Refusal::kPoolWindow)
    return "needs a window of at most " + std::to_string(kernels::kScalarPoolMaxCount) +
           " elements (exact 24-bit reciprocals), got " + std::to_string(int64_t(pool.k_h) * pool.k_w);
  return refusal_words(r);
}

std::string pointwise_rejects(const LoweredProgram& p, const ProgramOp& op) {
  const std::string refused = params_rejects<ConvParams, kernels::conv_s8_1x1_scalar_refusal, words>(p, op);
  return refused.empty() ? conv_rejects(p, op) : refused;
}

void conv_prepare(LoweredProgram& p, ProgramOp& op) {
  const auto c = params_of<ConvParams>(op);
  append_gemm_prepared(p, op, kernels::scalar_conv_prepared_words(c),
                       [&](const int8_t* w, const int32_t* bias, const int32_t* multipliers, const int32_t* shifts,
                           int32_t i) { return kernels::scalar_conv_prepared_word(c, w, bias, multipliers, shifts, i); });
}

// A kernel's arena scratch (kernels_scalar.h) of `bytes`, named after its output.
void append_scratch(LoweredProgram& p, ProgramOp& op, const char* suffix, int64_t bytes) {
  append_input(op, kernels::kScalarWindowSlot,
               add_scratch_tensor(p, p.tensors[op.outputs[0]].name + suffix, {int32_t(bytes)}));
}

void pointwise_prepare(LoweredProgram& p, ProgramOp& op) {
  conv_prepare(p, op);
  append_scratch(p, op, ".scalar_row", kernels::scalar_pointwise_row_bytes(params_of<ConvParams>(op)));
}

void im2col_prepare(LoweredProgram& p, ProgramOp& op) {
  conv_prepare(p, op);
  append_scratch(p, op, ".scalar_window", kernels::scalar_conv_window_bytes(params_of<ConvParams>(op)));
}

// --- fc_s8_scalar ---

std::string fc_rejects(const LoweredProgram& p, const ProgramOp& op) {
  const auto f = params_of<FcParams>(op);
  return gemm_rejects(p, op, f.out_c * f.in_c, kernels::scalar_gemm_prepared_words(f.out_c, f.in_c));
}

void fc_prepare(LoweredProgram& p, ProgramOp& op) {
  const auto f = params_of<FcParams>(op);
  append_gemm_prepared(p, op, kernels::scalar_gemm_prepared_words(f.out_c, f.in_c),
                       [&](const int8_t* w, const int32_t* bias, const int32_t* multipliers, const int32_t* shifts,
                           int32_t i) {
                         return kernels::scalar_gemm_prepared_word(w, bias, multipliers, shifts, f.per_channel ? 1 : 0,
                                                                   f.out_c, f.in_c, f.input_offset, i);
                       });
}

// --- dwconv_s8_3x3_scalar, dwconv_s8_scalar ---

// The kernel's refusal, constant inputs, and a prepared table the program format can hold.
template <Refusal (*kRefusal)(const DwConvParams&)>
std::string depthwise_rejects(const LoweredProgram& p, const ProgramOp& op) {
  const std::string refused = weighted_rejects<DwConvParams, kRefusal, words>(p, op);
  return refused.empty() ? prepared_table_rejects(kernels::scalar_dw_prepared_words(params_of<DwConvParams>(op)))
                         : refused;
}

void depthwise_prepare(LoweredProgram& p, ProgramOp& op) {
  const auto d = params_of<DwConvParams>(op);
  append_gemm_prepared(p, op, kernels::scalar_dw_prepared_words(d),
                       [&](const int8_t* w, const int32_t* bias, const int32_t* multipliers, const int32_t* shifts,
                           int32_t i) { return kernels::scalar_dw_prepared_word(d, w, bias, multipliers, shifts, i); });
}

void depthwise_taps_prepare(LoweredProgram& p, ProgramOp& op) {
  depthwise_prepare(p, op);
  append_scratch(p, op, ".scalar_taps", kernels::scalar_dw_taps_bytes(params_of<DwConvParams>(op)));
}

// --- avgpool_s8_scalar, maxpool_s8_scalar ---

// The reciprocal of every window count 1 ... k_h * k_w (kernels_scalar.h).
void avgpool_prepare(LoweredProgram& p, ProgramOp& op) {
  const auto pool = params_of<kernels::PoolParams>(op);
  append_table<int32_t>(p, op, kernels::kScalarPoolReciprocalSlot, ".scalar_reciprocals", DType::kInt32,
                        {pool.k_h * pool.k_w}, [](int32_t i) { return kernels::scalar_pool_reciprocal(i + 1); });
}

// add_s8_scalar, mul_s8_scalar, clamp_s8_scalar, requantize_s8_scalar, maxpool_s8_scalar: any such op;
// reduce_s8_scalar: a sum or a mean (tier_contract.h).

void add_prepare(LoweredProgram& p, ProgramOp& op) {
  const auto b = params_of<kernels::BinaryParams>(op);
  append_table<int32_t>(p, op, kernels::kAddTablesSlot, ".scalar_add_tables", DType::kInt32,
                        {kernels::kScalarAddTableWords}, [&b](int32_t i) { return kernels::scalar_add_table_word(b, i); });
}

void requantize_prepare(LoweredProgram& p, ProgramOp& op) {
  const auto r = params_of<kernels::RequantizeParams>(op);
  append_table<int8_t>(p, op, kernels::kRequantizeTableSlot, ".scalar_requantize_table", DType::kInt8,
                       {kernels::kByteValues}, [&r](int32_t i) { return kernels::requantize_table_entry(r, i); });
}

}  // namespace

// softmax_s8_scalar, softmax_s8_dsp, softmax_s8_mve: any softmax_s8, with its exp table.
void append_softmax_exp_table(LoweredProgram& p, ProgramOp& op) {
  const auto s = params_of<kernels::SoftmaxParams>(op);
  append_table<int32_t>(p, op, kernels::kSoftmaxExpTableSlot, ".softmax_exp_table", DType::kInt32,
                        {kernels::kSoftmaxTableEntries}, [&s](int32_t i) { return kernels::softmax_exp_table_entry(s, i); });
}

// concat_slice_s8_scalar, _dsp, _mve: any cat slice; one that requantizes gets its table, the
// reference's output for each input byte (elementwise_tiers.h); a plain copy nothing.
void append_concat_table(LoweredProgram& p, ProgramOp& op) {
  const auto c = params_of<kernels::ConcatSliceParams>(op);
  if (c.requantize == 0) return;
  append_table<int8_t>(p, op, kernels::kRequantizeTableSlot, ".concat_requantize_table", DType::kInt8,
                       {kernels::kByteValues}, [&c](int32_t i) { return kernels::concat_requantize_table_entry(c, i); });
}

// dequantize_s8_f32_scalar, dequantize_s8_f32_dsp: any dequantize_s8_f32, with its 256 outputs.
void append_dequantize_table(LoweredProgram& p, ProgramOp& op) {
  const auto q = params_of<kernels::QuantizeParams>(op);
  append_table<uint32_t>(p, op, kernels::kDequantizeTableSlot, ".dequantize_table", DType::kFloat32,
                         {kernels::kByteValues}, [&q](int32_t i) { return kernels::dequantize_table_entry(q, i); });
}

// Thumb-1 code runs on every core, but DSP and MVE cores do not take scalar kernels: the only
// ops their own kernels leave to the reference (windows of fewer than four values) ran slower
// with them on qemu-m4 and qemu-m55, where the reference's 64-bit requantization multiply is
// one instruction.
constexpr CoreFeatures kScalarCore = kThumb, kFasterCore = kDsp;

std::vector<TierCandidate> scalar_candidates() {
  return {
      {KernelId::conv_s8_1x1_scalar, KernelId::conv_s8, pointwise_rejects, pointwise_prepare,
       "1x1 conv: Thumb-1, 4 output channels, two products per MULS", kScalarCore, kFasterCore},
      {KernelId::conv_s8_scalar, KernelId::conv_s8, conv_rejects, im2col_prepare,
       "conv: Thumb-1, window gathered per pixel, 4 output channels, two products per MULS", kScalarCore, kFasterCore},
      {KernelId::fc_s8_scalar, KernelId::fc_s8, fc_rejects, fc_prepare,
       "fully connected: Thumb-1, 4 output channels, two products per MULS", kScalarCore, kFasterCore},
      {KernelId::dwconv_s8_3x3_scalar, KernelId::dwconv_s8, depthwise_rejects<kernels::dwconv_s8_3x3_scalar_refusal>,
       depthwise_prepare,
       "depthwise 3x3: Thumb-1, tap pointers per pixel (padding reads the zero point)", kScalarCore, kFasterCore},
      {KernelId::dwconv_s8_scalar, KernelId::dwconv_s8, depthwise_rejects<kernels::dwconv_s8_scalar_refusal>,
       depthwise_taps_prepare,
       "depthwise, any window: Thumb-1, tap pointers per pixel (padding reads the zero point), two taps per pass",
       kScalarCore, kFasterCore},
      {KernelId::avgpool_s8_scalar, KernelId::avgpool_s8,
       params_rejects<kernels::PoolParams, kernels::avgpool_s8_scalar_refusal, words>, avgpool_prepare,
       "average pool: Thumb-1, 8 channels per pass summed in 16-bit lanes (SWAR), division by reciprocal MULS", kScalarCore, kFasterCore},
      {KernelId::maxpool_s8_scalar, KernelId::maxpool_s8, accepts_any, nullptr,
       "max pool: Thumb-1, 4 channels per pass in registers, one word load per pixel", kScalarCore, kFasterCore},
      {KernelId::reduce_s8_scalar, KernelId::reduce_s8, params_rejects<kernels::ReduceParams, kernels::reduce_sum_refusal>,
       nullptr, "sum / mean: Thumb-1, 8 channels per pass summed in 16-bit lanes (SWAR), outputs from 16x16-bit MULS",
       kScalarCore, kFasterCore},
      {KernelId::add_s8_scalar, KernelId::add_s8, accepts_any, add_prepare,
       "add: Thumb-1, both inputs rescaled by table lookup, output requantized from 16x16-bit MULS", kScalarCore, kFasterCore},
      {KernelId::mul_s8_scalar, KernelId::mul_s8, accepts_any, nullptr,
       "mul: Thumb-1, product requantized from 16x16-bit MULS", kScalarCore, kFasterCore},
      {KernelId::clamp_s8_scalar, KernelId::clamp_s8, accepts_any, nullptr,
       "clamp: Thumb-1, four bytes per word compared without branches (SWAR)", kScalarCore, kFasterCore},
      {KernelId::requantize_s8_scalar, KernelId::requantize_s8, accepts_any, requantize_prepare,
       "requantize: Thumb-1, one 256-entry table lookup per element", kScalarCore, kFasterCore},
      {KernelId::lut_s8_scalar, KernelId::lut_s8, accepts_any, nullptr,
       "table-lookup activation: Thumb-1, signed bytes index the table from its middle", kScalarCore, kFasterCore},
      {KernelId::softmax_s8_scalar, KernelId::softmax_s8, accepts_any, append_softmax_exp_table,
       "softmax: Thumb-1, exp table lookup, outputs from a 16x16-bit MULS (64-bit product only near a rounding step)", kScalarCore, kFasterCore},
      {KernelId::concat_slice_s8_scalar, KernelId::concat_slice_s8, accepts_any, append_concat_table,
       "cat slice: Thumb-1, rows moved as words where aligned alike, requantized by a 256-entry table", kScalarCore,
       kFasterCore},
      {KernelId::strided_copy_b8_scalar, KernelId::strided_copy_b8, accepts_any, nullptr,
       "strided copy: Thumb-1, unit-step rows moved as words where aligned alike, fills as words", kScalarCore,
       kFasterCore},
      // int16 table activation and softmax: the reference's tables, nothing prepared.
      {KernelId::lut_s16_scalar, KernelId::lut_s16, accepts_any, nullptr,
       "int16 table activation: Thumb-1, the table indexed from its middle, 16 instructions per value", kScalarCore,
       kFasterCore},
      {KernelId::softmax_s16_scalar, KernelId::softmax_s16, accepts_any, nullptr,
       "int16 softmax: Thumb-1 exp pass, 24 instructions per value", kScalarCore, kFasterCore},
      {KernelId::permute_b8_scalar, KernelId::permute_b8, accepts_any, nullptr,
       "byte permute: Thumb-1, aligned rows by words, others four gathered bytes per step", kScalarCore, kFasterCore},
      {KernelId::dequantize_s8_f32_scalar, KernelId::dequantize_s8_f32, accepts_any, append_dequantize_table,
       "dequantize: Thumb-1, the 256 outputs' table looked up per element", kScalarCore, kFasterCore},
  };
}

}  // namespace mcuflow::compiler
