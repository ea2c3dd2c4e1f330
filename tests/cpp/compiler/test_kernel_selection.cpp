// Tier kernel selection from a core's features (kernel_selection.h): each candidate runs only on
// a core with every feature it requires, and the target table gives each core its features.
#include <gtest/gtest.h>

#include <cstring>

#include "mcuflow/compiler/compile.h"
#include "mcuflow/compiler/kernel_selection.h"
#include "mcuflow/kernels/params.h"

namespace mcuflow::compiler {
namespace {

// A float32 -> int8 quantization of 8 values: one candidate per tier that has one (MVE).
LoweredProgram quantize_program() {
  LoweredProgram p;
  ProgramTensor x, y;
  x.name = "x", x.dtype = format::DType::kFloat32, x.dims = {8};
  y.name = "y", y.dtype = format::DType::kInt8, y.dims = {8};
  ProgramOp op;
  op.kernel = KernelId::quantize_f32_s8;
  op.inputs = {p.add_tensor(x)};
  op.outputs = {p.add_tensor(y)};
  const kernels::QuantizeParams params{8, 0.5f, 3};
  op.params.resize(sizeof(params));
  std::memcpy(op.params.data(), &params, sizeof(params));
  p.ops.push_back(op);
  p.inputs = op.inputs, p.outputs = op.outputs;
  return p;
}

KernelId selected(CoreFeatures features, std::string* reason = nullptr) {
  LoweredProgram p = quantize_program();
  select_kernels(p, features);
  if (reason) *reason = p.ops[0].reason;
  return p.ops[0].kernel;
}

TEST(KernelSelection, ACandidateNeedsEveryFeatureItRequires) {
  EXPECT_EQ(selected(find_target("cortex-m55").features), KernelId::quantize_f32_s8_mve);
  // Helium without float vectors (an integer-only M55 build): the DSP tier's FPU quantization;
  // without the FPU too, the reference.
  std::string reason;
  EXPECT_EQ(selected(kThumb | kDsp | kFpu | kMve), KernelId::quantize_f32_s8_dsp);
  EXPECT_EQ(selected(kThumb | kDsp | kMve, &reason), KernelId::quantize_f32_s8);
  EXPECT_EQ(reason, "reference: no mve kernel for this op yet");
  EXPECT_EQ(selected(kThumb | kDsp | kMve | kMveF), KernelId::quantize_f32_s8) << "quantize divides on the FPU";
  EXPECT_EQ(selected(find_target("reference").features, &reason), KernelId::quantize_f32_s8);
  EXPECT_EQ(reason, "reference: reference target");
}

TEST(KernelSelection, TargetsNameTheirCoresFeatures) {
  for (const char* core : {"cortex-m0", "cortex-m0plus", "cortex-m3", "cortex-m23"})
    EXPECT_EQ(find_target(core).features, CoreFeatures(kThumb)) << core;
  for (const char* core : {"cortex-m4", "cortex-m7", "cortex-m33", "cortex-m35p"})
    EXPECT_EQ(find_target(core).features, CoreFeatures(kThumb | kDsp | kFpu)) << core;
  for (const char* core : {"cortex-m55", "cortex-m85"})
    EXPECT_EQ(find_target(core).features, CoreFeatures(kThumb | kDsp | kFpu | kMve | kMveF)) << core;
  EXPECT_EQ(find_target("reference").features, CoreFeatures(0));
}

// Every tier kernel is exactly one candidate's, replaces its listed reference, and some target's
// features select it.
TEST(KernelSelection, EveryTierKernelHasOneCandidateATargetCanRun) {
  std::vector<TierCandidate> all;
  for (const auto& tier : {scalar_candidates(), dsp_candidates(), mve_candidates()})
    all.insert(all.end(), tier.begin(), tier.end());
  const auto runs_on = [](const TierCandidate& c, CoreFeatures f) {
    return (c.requires & f) == c.requires && !(c.unless & f);
  };
  struct Listed {
    KernelId kernel, reference;
    const char* name;
  };
#define MCUFLOW_LISTED(name, id, reference) {KernelId::name, KernelId::reference, #name},
  const Listed listed[] = {MCUFLOW_TIER_KERNELS(MCUFLOW_LISTED)};
#undef MCUFLOW_LISTED
  for (const Listed& k : listed) {
    int found = 0;
    for (const TierCandidate& c : all) {
      if (c.kernel != k.kernel) continue;
      ++found;
      EXPECT_EQ(c.reference, k.reference) << k.name;
      bool some = false;
      for (const char* core : {"cortex-m0", "cortex-m4", "cortex-m55"}) some = some || runs_on(c, find_target(core).features);
      EXPECT_TRUE(some) << k.name << " runs on no target";
    }
    EXPECT_EQ(found, 1) << k.name;
  }
}

}  // namespace
}  // namespace mcuflow::compiler
