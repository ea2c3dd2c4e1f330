#include "mcuflow/compiler/kernel_selection.h"

#include "mcuflow/compiler/ir.h"

namespace mcuflow::compiler {

std::vector<int32_t> table_dims(int32_t words) {
  using format::kMaxDim;
  if (words <= kMaxDim) return {words};
  for (int32_t inner = kMaxDim; inner * int64_t(kMaxDim) >= words; --inner) {
    if (words % inner == 0) return {words / inner, inner};
  }
  return {};
}

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

std::string accepts_any(const LoweredProgram&, const ProgramOp&) { return ""; }

std::string needs_constant_inputs(const LoweredProgram& p, const ProgramOp& op) {
  for (int slot = kernels::kFirstConstantSlot; slot <= kernels::kLastConstantSlot; ++slot) {
    if (!p.tensors[op.inputs[slot]].constant) return "needs constant weights, bias and requantization tables";
  }
  return "";
}

void append_input(ProgramOp& op, uint8_t slot, int tensor) {
  if (op.inputs.size() != slot)
    throw CompileError("internal: a tier kernel's input slot " + std::to_string(slot) + " follows " +
                       std::to_string(op.inputs.size()) + " inputs");
  op.inputs.push_back(tensor);
}

std::string refusal_words(kernels::Refusal r) {
  using kernels::Refusal;
  switch (r) {
    case Refusal::kNone: return "";
    case Refusal::kKernelSize: return "needs another kernel size";
    case Refusal::kPadding: return "needs no padding";
    case Refusal::kGridOutsideInput: return "needs its strided output grid inside the input";
    case Refusal::kWindowDepth: return "needs another window depth";
    case Refusal::kInputChannels: return "needs another number of input channels";
    case Refusal::kChannelMultiplier: return "needs channel multiplier 1";
    case Refusal::kTaps: return "needs fewer taps";
    case Refusal::kStride: return "needs horizontal stride 1";
    case Refusal::kDilation: return "needs no dilation";
    case Refusal::kPoolWindow: return "needs a smaller pooling window";
    case Refusal::kAddRange: return "needs rescaled inputs whose doubled, left-shifted sum fits int32";
    case Refusal::kMulRange: return "needs a product of the offset inputs whose doubled, left-shifted value fits int32";
    case Refusal::kScale: return "needs a normal scale";
    case Refusal::kGroups: return "needs an ungrouped convolution";
    case Refusal::kReduceMax: return "needs a sum or a mean (a maximum runs on the reference)";
    case Refusal::kWeightCount: return "needs at most " + std::to_string(kernels::kW4MaxUnpacked) + " int4 weights";
    case Refusal::kOutputChannels: return "needs fewer output channels";
  }
  return "refused";
}

const char* tier_name(CoreFeatures features) {
  if (features & kMve) return "mve";
  if (features & kDsp) return "dsp";
  if (features & kThumb) return "scalar";
  return "reference";
}

void select_kernels(LoweredProgram& p, CoreFeatures features) {
  std::vector<TierCandidate> candidates;
  for (const auto& tier : {mve_candidates(), dsp_candidates(), scalar_candidates()}) {
    for (const TierCandidate& c : tier) {
      if ((c.requires & features) == c.requires && !(c.unless & features)) candidates.push_back(c);
    }
  }
  const std::string tier = tier_name(features);
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
      // Tiers sharing a contract (a DSP kernel on an MVE core) refuse with the same words: once.
      if (why_not.find(rejection) == std::string::npos) why_not += (why_not.empty() ? "" : "; ") + rejection;
    }
    if (!why_not.empty()) op.reason = "reference fallback: " + why_not;
    else if (features == 0) op.reason = "reference: reference target";
    else if (!has_candidate) op.reason = "reference: no " + tier + " kernel for this op yet";
  }
}

}  // namespace mcuflow::compiler
