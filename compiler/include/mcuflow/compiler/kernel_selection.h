// Kernel selection: after lowering, each reference op is replaced by the target tier's
// optimized kernel when the op meets that kernel's constraints; otherwise it keeps the
// reference kernel and records why (mcuflow inspect shows it).
#pragma once
#include <cstring>
#include <string>
#include <vector>

#include "mcuflow/compiler/lowered.h"
#include "mcuflow/kernels/tier_contract.h"

namespace mcuflow::compiler {

// Instruction-set features of a core (compile.h find_target lists each target's): each tier
// kernel requires some, and a target gets the kernels its core's features allow.
enum CoreFeature : uint32_t {
  kThumb = 1u << 0,  // Armv6-M Thumb instructions, which every Cortex-M core runs
  kDsp = 1u << 1,    // DSP extension: SIMD32, SMLAD, SXTB16 (Armv7E-M, Armv8-M Mainline)
  kFpu = 1u << 2,    // single-precision floating-point unit
  kMve = 1u << 3,    // Helium integer vectors (Armv8.1-M)
  kMveF = 1u << 4,   // Helium floating-point vectors
};
using CoreFeatures = uint32_t;

// The tier a core's best kernels come from, for reports: "mve", "dsp", "scalar" or "reference"
// (no features: portable reference kernels only).
const char* tier_name(CoreFeatures features);

struct TierCandidate {
  KernelId kernel;     // the optimized kernel (listed in MCUFLOW_TIER_KERNELS)
  KernelId reference;  // the reference kernel it replaces
  // "" when `op` qualifies, otherwise a short reason ("needs a 1x1 kernel, got 3x3").
  std::string (*rejects)(const LoweredProgram& p, const ProgramOp& op);
  // Appends the constant inputs the kernel wants precomputed (folded bias, packed weights…);
  // may be null. Must not change the op's existing inputs, params or outputs.
  void (*prepare)(LoweredProgram& p, ProgramOp& op);
  const char* summary;  // what the kernel is, for inspect ("1x1 conv, SMLAD over 2 channels")
  CoreFeatures requires;    // the core features the kernel's instructions need
  CoreFeatures unless = 0;  // a core with any of these runs faster kernels: skip this one there
};

// Candidates in order of preference, per tier (compiler/src/tiers/<tier>_rules.cpp).
std::vector<TierCandidate> scalar_candidates();
std::vector<TierCandidate> dsp_candidates();
std::vector<TierCandidate> mve_candidates();

// Per op, the first candidate (MVE, then DSP, then scalar) that `features` allow and that
// accepts the op; otherwise the reference kernel stays, with the reason.
void select_kernels(LoweredProgram& p, CoreFeatures features);

// Helpers for rules: the op's params struct, a new constant tensor, a new scratch tensor, and
// whether the op's weights, bias and requantization tables are constants.
template <typename P>
P params_of(const ProgramOp& op) {
  P p;
  std::memcpy(&p, op.params.data(), sizeof(P));
  return p;
}
int add_constant_tensor(LoweredProgram& p, const std::string& name, format::DType dtype, std::vector<int32_t> dims,
                        std::vector<uint8_t> bytes);
// Appends `tensor` as the op's input `slot`, a slot the kernel's contract names
// (kernels_<tier>.h): the op must have exactly `slot` inputs so far.
void append_input(ProgramOp& op, uint8_t slot, int tensor);
// Appends as the op's input `slot` a constant table of `dims` elements T of `dtype`, entry(i)
// each, named after the op's output with `suffix`.
template <typename T, typename Entry>
void append_table(LoweredProgram& p, ProgramOp& op, uint8_t slot, const std::string& suffix, format::DType dtype,
                  std::vector<int32_t> dims, Entry entry) {
  int32_t count = 1;
  for (int32_t d : dims) count *= d;
  std::vector<uint8_t> bytes(size_t(count) * sizeof(T));
  for (int32_t i = 0; i < count; ++i) {
    const T v = entry(i);
    std::memcpy(&bytes[size_t(i) * sizeof(T)], &v, sizeof(T));
  }
  append_input(op, slot, add_constant_tensor(p, p.tensors[op.outputs[0]].name + suffix, dtype, std::move(dims),
                                             std::move(bytes)));
}
// A shape of `elements` within the program format's per-dimension limit (kernels read prepared
// tables flat): one dimension, or two whose product is exact; empty when there is none.
std::vector<int32_t> table_dims(int32_t elements);
// An int8 arena tensor for one op's own use: the planner gives it that op's lifetime.
int add_scratch_tensor(LoweredProgram& p, const std::string& name, std::vector<int32_t> dims);
// A candidate's `rejects` for a kernel that takes every op of its reference.
std::string accepts_any(const LoweredProgram& p, const ProgramOp& op);
// Preparations the tiers share: requantize_s8_dsp/_mve's table of every input byte's output
// (dsp_rules.cpp), softmax_s8_scalar/_dsp/_mve's exp table and concat_slice_s8_<tier>'s table of
// a requantizing slice (scalar_rules.cpp).
void append_requantize_table(LoweredProgram& p, ProgramOp& op);
void append_softmax_exp_table(LoweredProgram& p, ProgramOp& op);
void append_concat_table(LoweredProgram& p, ProgramOp& op);
// dequantize_s8_f32_scalar/_dsp's table of the 256 outputs (scalar_rules.cpp).
void append_dequantize_table(LoweredProgram& p, ProgramOp& op);
// "" when the weights, bias and requantization tables (kernels::kFirstConstantSlot ...
// kLastConstantSlot) are constants, else the reason.
std::string needs_constant_inputs(const LoweredProgram& p, const ProgramOp& op);
// The compiler's words for a refusal of a tier kernel (tier_contract.h); tier rules word the
// codes whose reason shows the op's values themselves.
std::string refusal_words(kernels::Refusal r);
template <typename P>
std::string plain_words(kernels::Refusal r, const P&) {
  return refusal_words(r);
}

// A candidate's `rejects` from the kernel's contract: "" when kRefusal (the kernel's own, which
// its load-time check calls too) takes the op's params, otherwise kWords' reason for the code.
template <typename P, kernels::Refusal (*kRefusal)(const P&),
          std::string (*kWords)(kernels::Refusal, const P&) = plain_words<P>>
std::string params_rejects(const LoweredProgram&, const ProgramOp& op) {
  const P params = params_of<P>(op);
  return kWords(kRefusal(params), params);
}
// The same for a kernel replacing a weighted reference (conv, depthwise, linear): it also needs
// the weights, bias and requantization tables to be constants.
template <typename P, kernels::Refusal (*kRefusal)(const P&), std::string (*kWords)(kernels::Refusal, const P&)>
std::string weighted_rejects(const LoweredProgram& p, const ProgramOp& op) {
  const std::string refused = params_rejects<P, kRefusal, kWords>(p, op);
  return refused.empty() ? needs_constant_inputs(p, op) : refused;
}

}  // namespace mcuflow::compiler
