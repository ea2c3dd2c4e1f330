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

// The constant int32 input in `slot` (bias, multipliers, shifts).
const int32_t* table(const LoweredProgram& p, const ProgramOp& op, int slot) {
  return reinterpret_cast<const int32_t*>(p.tensors[op.inputs[slot]].bytes.data());
}

// A shape of `words` elements within the program format's per-dimension limit (the kernels read
// the table flat): one dimension, or two whose product is exact; empty when there is none.
std::vector<int32_t> table_dims(int32_t words) {
  using format::kMaxDim;
  if (words <= kMaxDim) return {words};
  for (int32_t inner = kMaxDim; inner * int64_t(kMaxDim) >= words; --inner) {
    if (words % inner == 0) return {words / inner, inner};
  }
  return {};
}

// Appends a constant int32 input of `words` elements word(i) (table_dims(words) is not empty).
template <typename Word>
void append_words(LoweredProgram& p, ProgramOp& op, const std::string& name, int32_t words, Word word) {
  std::vector<uint8_t> bytes(size_t(words) * 4);
  for (int32_t i = 0; i < words; ++i) {
    const int32_t v = word(i);
    std::memcpy(&bytes[size_t(i) * 4], &v, 4);
  }
  op.inputs.push_back(add_constant_tensor(p, name, DType::kInt32, table_dims(words), std::move(bytes)));
  op.streamed_input = int(op.inputs.size()) - 1;  // the scalar kernels read their weights here
}

// Appends the GEMM kernels' prepared input for an [out_c][depth] weight matrix (kernels_scalar.h).
void append_gemm_prepared(LoweredProgram& p, ProgramOp& op, int32_t out_c, int32_t depth, int32_t input_offset,
                          int32_t requant_step) {
  const ProgramTensor& weights = p.tensors[op.inputs[1]];
  const auto* w = reinterpret_cast<const int8_t*>(weights.bytes.data());
  const int32_t *bias = table(p, op, 2), *multipliers = table(p, op, 3), *shifts = table(p, op, 4);
  append_words(p, op, weights.name + ".scalar_prepared", kernels::scalar_gemm_prepared_words(out_c, depth),
               [&](int32_t i) {
                 return kernels::scalar_gemm_prepared_word(w, bias, multipliers, shifts, requant_step, out_c, depth,
                                                           input_offset, i);
               });
}

// --- conv_s8_1x1_scalar, conv_s8_scalar ---

// The GEMM kernels' constant inputs, and weights in -127..127 for their packed sums
// (kernels_scalar.h).
std::string gemm_rejects(const LoweredProgram& p, const ProgramOp& op, int32_t out_c, int32_t depth) {
  const std::string constants = needs_constant_inputs(p, op);
  if (!constants.empty()) return constants;
  const ProgramTensor& w = p.tensors[op.inputs[1]];
  if (!kernels::scalar_weights_symmetric(reinterpret_cast<const int8_t*>(w.bytes.data()), out_c * depth))
    return "needs weights in -127..127";
  const int32_t words = kernels::scalar_gemm_prepared_words(out_c, depth);
  if (table_dims(words).empty())
    return "its prepared table of " + std::to_string(words) + " words has no shape within 65,536 per dimension";
  return "";
}

std::string conv_rejects(const LoweredProgram& p, const ProgramOp& op) {
  const auto c = params_of<ConvParams>(op);
  return gemm_rejects(p, op, c.out_c, c.k_h * c.k_w * c.in_c);
}

std::string pointwise_rejects(const LoweredProgram& p, const ProgramOp& op) {
  const auto c = params_of<ConvParams>(op);
  if (c.k_h != 1 || c.k_w != 1) return "needs a 1x1 kernel, got " + std::to_string(c.k_h) + "x" + std::to_string(c.k_w);
  if (c.pad_top != 0 || c.pad_left != 0) return "needs no padding";
  return conv_rejects(p, op);
}

void conv_prepare(LoweredProgram& p, ProgramOp& op) {
  const auto c = params_of<ConvParams>(op);
  append_gemm_prepared(p, op, c.out_c, c.k_h * c.k_w * c.in_c, c.input_offset, 1);
}

void im2col_prepare(LoweredProgram& p, ProgramOp& op) {
  conv_prepare(p, op);
  const auto c = params_of<ConvParams>(op);
  op.inputs.push_back(add_scratch_tensor(p, p.tensors[op.outputs[0]].name + ".scalar_window",
                                         {c.k_h * c.k_w * c.in_c}));
}

// --- fc_s8_scalar ---

std::string fc_rejects(const LoweredProgram& p, const ProgramOp& op) {
  const auto f = params_of<FcParams>(op);
  return gemm_rejects(p, op, f.out_c, f.in_c);
}

void fc_prepare(LoweredProgram& p, ProgramOp& op) {
  const auto f = params_of<FcParams>(op);
  append_gemm_prepared(p, op, f.out_c, f.in_c, f.input_offset, f.per_channel ? 1 : 0);
}

// --- dwconv_s8_3x3_scalar ---

std::string depthwise_3x3_rejects(const LoweredProgram& p, const ProgramOp& op) {
  const auto d = params_of<DwConvParams>(op);
  if (d.k_h != 3 || d.k_w != 3) return "needs a 3x3 kernel, got " + std::to_string(d.k_h) + "x" + std::to_string(d.k_w);
  if (d.ch_mult != 1) return "needs channel multiplier 1, got " + std::to_string(d.ch_mult);
  return needs_constant_inputs(p, op);
}

void depthwise_3x3_prepare(LoweredProgram& p, ProgramOp& op) {
  const auto d = params_of<DwConvParams>(op);
  const ProgramTensor& weights = p.tensors[op.inputs[1]];
  const auto* w = reinterpret_cast<const int8_t*>(weights.bytes.data());
  const int32_t *bias = table(p, op, 2), *multipliers = table(p, op, 3), *shifts = table(p, op, 4);
  append_words(p, op, weights.name + ".scalar_prepared", kernels::scalar_dw3_prepared_words(d.in_c), [&](int32_t i) {
    return kernels::scalar_dw3_prepared_word(w, bias, multipliers, shifts, d.in_c, d.input_offset, i);
  });
}

// --- avgpool_s8_scalar, maxpool_s8_scalar ---

std::string avgpool_rejects(const LoweredProgram&, const ProgramOp& op) {
  const auto pool = params_of<kernels::PoolParams>(op);
  const int64_t taps = int64_t(pool.k_h) * pool.k_w;
  if (taps > kernels::kScalarPoolMaxCount)
    return "needs a window of at most " + std::to_string(kernels::kScalarPoolMaxCount) +
           " elements (exact 24-bit reciprocals), got " + std::to_string(taps);
  return "";
}

// The reciprocal of every window count 1 ... k_h * k_w (kernels_scalar.h).
void avgpool_prepare(LoweredProgram& p, ProgramOp& op) {
  const auto pool = params_of<kernels::PoolParams>(op);
  const int32_t taps = pool.k_h * pool.k_w;
  std::vector<uint8_t> bytes(size_t(taps) * 4);
  for (int32_t n = 1; n <= taps; ++n) {
    const int32_t v = kernels::scalar_pool_reciprocal(n);
    std::memcpy(&bytes[size_t(n - 1) * 4], &v, 4);
  }
  op.inputs.push_back(add_constant_tensor(p, p.tensors[op.outputs[0]].name + ".scalar_reciprocals", DType::kInt32,
                                          {taps}, std::move(bytes)));
}

std::string accepts_any_pool(const LoweredProgram&, const ProgramOp&) { return ""; }

// --- add_s8_scalar, mul_s8_scalar, clamp_s8_scalar, requantize_s8_scalar: any such op ---

std::string elementwise_rejects(const LoweredProgram&, const ProgramOp&) { return ""; }

// Appends a constant table of `count` elements of T, entry(i) each.
template <typename T, typename Entry>
void append_table(LoweredProgram& p, ProgramOp& op, const std::string& suffix, DType dtype, int32_t count, Entry entry) {
  std::vector<uint8_t> bytes(size_t(count) * sizeof(T));
  for (int32_t i = 0; i < count; ++i) {
    const T v = entry(i);
    std::memcpy(&bytes[size_t(i) * sizeof(T)], &v, sizeof(T));
  }
  op.inputs.push_back(add_constant_tensor(p, p.tensors[op.outputs[0]].name + suffix, dtype, {count}, std::move(bytes)));
}

void add_prepare(LoweredProgram& p, ProgramOp& op) {
  const auto b = params_of<kernels::BinaryParams>(op);
  append_table<int32_t>(p, op, ".scalar_add_tables", DType::kInt32, kernels::kScalarAddTableWords,
                        [&b](int32_t i) { return kernels::scalar_add_table_word(b, i); });
}

void requantize_prepare(LoweredProgram& p, ProgramOp& op) {
  const auto r = params_of<kernels::RequantizeParams>(op);
  append_table<int8_t>(p, op, ".scalar_requantize_table", DType::kInt8, kernels::kByteValues,
                       [&r](int32_t i) { return kernels::requantize_table_entry(r, i); });
}

}  // namespace

// --- softmax_s8_scalar, softmax_s8_dsp, softmax_s8_mve: any softmax_s8, with its exp table ---

std::string softmax_rejects(const LoweredProgram&, const ProgramOp&) { return ""; }

void append_softmax_exp_table(LoweredProgram& p, ProgramOp& op) {
  const auto s = params_of<kernels::SoftmaxParams>(op);
  std::vector<uint8_t> bytes(size_t(kernels::kSoftmaxTableEntries) * 4);
  for (int32_t i = 0; i < kernels::kSoftmaxTableEntries; ++i) {
    const int32_t v = kernels::softmax_exp_table_entry(s, i);
    std::memcpy(&bytes[size_t(i) * 4], &v, 4);
  }
  op.inputs.push_back(add_constant_tensor(p, p.tensors[op.outputs[0]].name + ".softmax_exp_table", DType::kInt32,
                                          {kernels::kSoftmaxTableEntries}, std::move(bytes)));
}

// Thumb-1 code runs on every core, but DSP and MVE cores do not take scalar kernels: the only
// ops their own kernels leave to the reference (windows of fewer than four values) ran slower
// with them on qemu-m4 and qemu-m55, where the reference's 64-bit requantization multiply is
// one instruction.
constexpr CoreFeatures kScalarCore = kThumb, kFasterCore = kDsp;

std::vector<TierCandidate> scalar_candidates() {
  return {
      {KernelId::conv_s8_1x1_scalar, KernelId::conv_s8, pointwise_rejects, conv_prepare,
       "1x1 conv: Thumb-1, 4 output channels, two products per MULS", kScalarCore, kFasterCore},
      {KernelId::conv_s8_scalar, KernelId::conv_s8, conv_rejects, im2col_prepare,
       "conv: Thumb-1, window gathered per pixel, 4 output channels, two products per MULS", kScalarCore, kFasterCore},
      {KernelId::fc_s8_scalar, KernelId::fc_s8, fc_rejects, fc_prepare,
       "fully connected: Thumb-1, 4 output channels, two products per MULS", kScalarCore, kFasterCore},
      {KernelId::dwconv_s8_3x3_scalar, KernelId::dwconv_s8, depthwise_3x3_rejects, depthwise_3x3_prepare,
       "depthwise 3x3: Thumb-1, tap pointers per pixel (padding reads the zero point)", kScalarCore, kFasterCore},
      {KernelId::avgpool_s8_scalar, KernelId::avgpool_s8, avgpool_rejects, avgpool_prepare,
       "average pool: Thumb-1, 8 channels per pass summed in 16-bit lanes (SWAR), division by reciprocal MULS", kScalarCore, kFasterCore},
      {KernelId::maxpool_s8_scalar, KernelId::maxpool_s8, accepts_any_pool, nullptr,
       "max pool: Thumb-1, 4 channels per pass in registers, one word load per pixel", kScalarCore, kFasterCore},
      {KernelId::add_s8_scalar, KernelId::add_s8, elementwise_rejects, add_prepare,
       "add: Thumb-1, both inputs rescaled by table lookup, output requantized from 16x16-bit MULS", kScalarCore, kFasterCore},
      {KernelId::mul_s8_scalar, KernelId::mul_s8, elementwise_rejects, nullptr,
       "mul: Thumb-1, product requantized from 16x16-bit MULS", kScalarCore, kFasterCore},
      {KernelId::clamp_s8_scalar, KernelId::clamp_s8, elementwise_rejects, nullptr,
       "clamp: Thumb-1, four bytes per word compared without branches (SWAR)", kScalarCore, kFasterCore},
      {KernelId::requantize_s8_scalar, KernelId::requantize_s8, elementwise_rejects, requantize_prepare,
       "requantize: Thumb-1, one 256-entry table lookup per element", kScalarCore, kFasterCore},
      {KernelId::softmax_s8_scalar, KernelId::softmax_s8, softmax_rejects, append_softmax_exp_table,
       "softmax: Thumb-1, exp table lookup, outputs from a 16x16-bit MULS (64-bit product only near a rounding step)", kScalarCore, kFasterCore},
  };
}

}  // namespace mcuflow::compiler
