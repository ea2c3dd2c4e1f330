#include "mcuflow/compiler/kernel_selection.h"

namespace mcuflow::compiler {

int add_constant_tensor(LoweredProgram& p, const std::string& name, format::DType dtype, std::vector<int32_t> dims,
                        std::vector<uint8_t> bytes) {
  ProgramTensor t;
  t.name = name;
  t.dtype = dtype;
  t.dims = std::move(dims);
  t.logical_shape.assign(t.dims.begin(), t.dims.end());
  t.constant = true;
  t.bytes = std::move(bytes);
  return p.add_tensor(std::move(t));
}

int add_scratch_tensor(LoweredProgram& p, const std::string& name, std::vector<int32_t> dims) {
  ProgramTensor t;
  t.name = name;
  t.dtype = format::DType::kInt8;
  t.dims = std::move(dims);
  t.logical_shape.assign(t.dims.begin(), t.dims.end());
  return p.add_tensor(std::move(t));
}

std::string needs_constant_inputs(const LoweredProgram& p, const ProgramOp& op) {
  for (int slot = 1; slot <= 4; ++slot) {
    if (!p.tensors[op.inputs[slot]].constant) return "needs constant weights, bias and requantization tables";
  }
  return "";
}

void select_kernels(LoweredProgram& p, const std::string& tier) {
  std::vector<TierCandidate> candidates;
  // DSP and MVE cores do not take scalar kernels: the only ops their own kernels leave to the
  // reference (windows of fewer than four values) ran slower with them on qemu-m4 and qemu-m55,
  // where the reference's 64-bit requantization multiply is one instruction.
  if (tier == "scalar") candidates = scalar_candidates();
  if (tier == "mve") candidates = mve_candidates();
  if (tier == "mve" || tier == "dsp") {
    const auto dsp = dsp_candidates();
    candidates.insert(candidates.end(), dsp.begin(), dsp.end());
  }
  for (ProgramOp& op : p.ops) {
    std::string why_not;
    bool has_candidate = false;
    for (const TierCandidate& c : candidates) {
      if (c.reference != op.kernel) continue;
      has_candidate = true;
      const std::string rejection = c.rejects(p, op);
      if (rejection.empty()) {
        op.kernel = c.kernel;
        op.reason = std::string(c.summary);
        if (c.prepare) c.prepare(p, op);
        why_not.clear();
        break;
      }
      why_not += (why_not.empty() ? "" : "; ") + rejection;
    }
    if (!why_not.empty()) op.reason = "reference fallback: " + why_not;
    else if (tier == "reference") op.reason = "reference: reference target";
    else if (!has_candidate) op.reason = "reference: no " + tier + " kernel for this op yet";
  }
}

}  // namespace mcuflow::compiler
