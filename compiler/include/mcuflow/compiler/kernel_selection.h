// Kernel selection: after lowering, each reference op is replaced by the target tier's
// optimized kernel when the op meets that kernel's constraints; otherwise it keeps the
// reference kernel and records why (mcuflow inspect shows it).
#pragma once
#include <cstring>
#include <string>
#include <vector>

#include "mcuflow/compiler/lowered.h"

namespace mcuflow::compiler {

struct TierCandidate {
  KernelId kernel;     // the optimized kernel (listed in MCUFLOW_TIER_KERNELS)
  KernelId reference;  // the reference kernel it replaces
  // "" when `op` qualifies, otherwise a short reason ("needs a 1x1 kernel, got 3x3").
  std::string (*rejects)(const LoweredProgram& p, const ProgramOp& op);
  // Appends the constant inputs the kernel wants precomputed (folded bias, packed weights…);
  // may be null. Must not change the op's existing inputs, params or outputs.
  void (*prepare)(LoweredProgram& p, ProgramOp& op);
  const char* summary;  // what the kernel is, for inspect ("1x1 conv, SMLAD over 2 channels")
};

// Candidates in order of preference, per tier (compiler/src/tiers/<tier>_rules.cpp).
std::vector<TierCandidate> scalar_candidates();
std::vector<TierCandidate> dsp_candidates();
std::vector<TierCandidate> mve_candidates();

// tier: "scalar" | "dsp" | "mve" (MVE cores also have the DSP extension) | "reference" (none).
void select_kernels(LoweredProgram& p, const std::string& tier);

// Helpers for rules: the op's params struct, a new constant tensor, a new scratch tensor, and
// whether the op's weights, bias and requantization tables (inputs 1-4) are constants.
template <typename P>
P params_of(const ProgramOp& op) {
  P p;
  std::memcpy(&p, op.params.data(), sizeof(P));
  return p;
}
int add_constant_tensor(LoweredProgram& p, const std::string& name, format::DType dtype, std::vector<int32_t> dims,
                        std::vector<uint8_t> bytes);
// An int8 arena tensor for one op's own use: the planner gives it that op's lifetime.
int add_scratch_tensor(LoweredProgram& p, const std::string& name, std::vector<int32_t> dims);
// "" when inputs 1-4 are constants, else the reason.
std::string needs_constant_inputs(const LoweredProgram& p, const ProgramOp& op);

}  // namespace mcuflow::compiler
