// The memory plan, proven by execution: a program planned with every byte shared that can be
// (reuse, and in-place execution where the planner chooses it) computes bit-for-bit what the same
// program computes when every tensor has bytes of its own, starting from a scrambled arena. Any
// tensor overwritten before its last read, or read before it is written, changes the outputs.
#include <gtest/gtest.h>

#include "../test_programs.h"
#include "mcuflow/compiler/compile.h"
#include "mcuflow/compiler/kernel_selection.h"
#include "mcuflow/compiler/lower.h"
#include "mcuflow/compiler/passes.h"
#include "mcuflow/compiler/planner.h"
#include "mcuflow/compiler/quantizer.h"
#include "mcuflow/compiler/serializer.h"

namespace mcuflow::compiler {
namespace {

using tp::Rng;

// Every output's bytes after one run from a scrambled arena.
std::vector<std::vector<uint8_t>> run_bytes(const std::vector<uint8_t>& program, const std::vector<std::vector<float>>& in,
                                            uint32_t scramble) {
  tp::Runner r(program);
  EXPECT_TRUE(r.ok()) << error_name(r.error());
  if (!r.ok()) return {};
  r.scramble_arena(scramble);
  for (uint32_t i = 0; i < r.program().input_count(); ++i) r.set_input(i, in[i]);
  EXPECT_EQ(r.run(), Error::kOk);
  EXPECT_TRUE(r.arena().guards_intact());
  std::vector<std::vector<uint8_t>> out;
  for (uint32_t o = 0; o < r.program().output_count(); ++o) {
    const auto buf = r.session().output_buffer(o).value();
    out.emplace_back(buf.data, buf.data + buf.size);
  }
  return out;
}

void check_shared_plan_matches_unshared(const Graph& model, bool int8, const std::string& target, uint32_t seed) {
  Graph g = model;
  run_graph_passes(g);
  if (int8) {
    calibrate(g, tp::random_calibration(g, 4, seed));
    assign_quantization(g);
  }
  LoweredProgram lowered = lower(g, LowerOptions{int8 ? Precision::kInt8 : Precision::kFloat32, false});
  select_kernels(lowered, find_target(target).features);
  LoweredProgram shared = lowered, unshared = lowered;
  plan_memory(shared);
  plan_memory(unshared, /*reuse=*/false);
  EXPECT_LE(shared.arena_bytes, unshared.arena_bytes);
  const auto shared_bytes = serialize(shared), unshared_bytes = serialize(unshared);
  Rng rng(seed);
  for (int trial = 0; trial < 2; ++trial) {
    const auto in = tp::random_inputs(model, rng);
    const auto a = run_bytes(shared_bytes, in, seed * 7 + trial), b = run_bytes(unshared_bytes, in, seed * 13 + trial);
    ASSERT_EQ(a.size(), b.size());
    for (size_t o = 0; o < a.size(); ++o) EXPECT_EQ(a[o], b[o]) << "output " << o;
    // The arena contents before the run do not matter either.
    EXPECT_EQ(run_bytes(shared_bytes, in, 99), a);
  }
}

TEST(PlanExecution, SharedPlansComputeWhatUnsharedPlansCompute) {
  for (uint32_t seed = 1; seed <= 40; ++seed) {
    SCOPED_TRACE(::testing::Message() << "random graph " << seed);
    const Graph g = tp::random_graph(seed, 12);
    for (bool int8 : {false, true}) {
      for (const char* target : {"cortex-m0", "cortex-m55"}) {
        SCOPED_TRACE(::testing::Message() << (int8 ? "int8 " : "fp32 ") << target);
        check_shared_plan_matches_unshared(g, int8, target, seed);
      }
    }
    if (::testing::Test::HasFailure()) return;
  }
}

TEST(PlanExecution, NamedModels) {
  for (const Graph& g : {tp::tiny_graph(), tp::conv_relu_pool_linear_graph(), tp::mixed_graph()}) {
    for (bool int8 : {false, true}) check_shared_plan_matches_unshared(g, int8, "cortex-m4", 5);
  }
}

// compile_graph (which may also reorder ops) agrees with the unshared plan of the same lowering.
TEST(PlanExecution, CompiledProgramsAgreeWithUnsharedPlans) {
  for (uint32_t seed = 1; seed <= 20; ++seed) {
    SCOPED_TRACE(::testing::Message() << "random graph " << seed);
    const Graph model = tp::random_graph(100 + seed, 12);
    Graph g = model;
    run_graph_passes(g);
    LoweredProgram unshared = lower(g, LowerOptions{Precision::kFloat32, false});
    plan_memory(unshared, false);
    const auto compiled = tp::compile_fp32(model, "cortex-m7");
    Rng rng(seed);
    const auto in = tp::random_inputs(model, rng);
    EXPECT_EQ(run_bytes(compiled, in, 1), run_bytes(serialize(unshared), in, 2));
  }
}

}  // namespace
}  // namespace mcuflow::compiler
