// Operator scheduling (compiler/src/passes/schedule.cpp): the chosen order respects every data
// dependency, its liveness peak is the smallest over all valid orders (checked by enumerating
// them on small random programs), the exported order stays when nothing is better, and
// compiled programs compute the same bytes in either order.
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <set>
#include <string>

#include "../test_programs.h"
#include "planner_test_util.h"
#include "mcuflow/compiler/planner.h"

namespace mcuflow::compiler {
namespace {

using planner_test::run_program;
using tp::Rng;

int root(const LoweredProgram& p, int t) { return p.tensors[size_t(t)].alias_of >= 0 ? p.tensors[size_t(t)].alias_of : t; }

ProgramTensor activation(const std::string& name, int32_t bytes) {
  ProgramTensor t;
  t.name = name;
  t.dims = {bytes};
  return t;
}

// A random DAG: ops read one or two earlier activations (or views of them) and write a new
// tensor; some pairs of ops write two slices of one tensor (a cat); a constant input here and
// there. Kernels that never run in place keep the check about the order alone.
LoweredProgram random_dag(uint32_t seed, int max_ops) {
  Rng rng(seed);
  LoweredProgram p;
  std::vector<int> acts;
  const int n_inputs = rng.uniform_int(1, 2);
  for (int i = 0; i < n_inputs; ++i) {
    acts.push_back(p.add_tensor(activation("in" + std::to_string(i), rng.uniform_int(1, 300))));
    p.inputs.push_back(acts.back());
  }
  const int n_ops = rng.uniform_int(2, max_ops);
  while (int(p.ops.size()) < n_ops) {
    const bool cat = rng.coin(0.2) && int(p.ops.size()) + 2 <= n_ops;
    const int out = p.add_tensor(activation("t" + std::to_string(p.ops.size()), rng.uniform_int(1, 600)));
    for (int part = 0; part < (cat ? 2 : 1); ++part) {
      ProgramOp op;
      op.kernel = cat ? KernelId::concat_slice_s8 : KernelId::permute_b8;
      const int n_in = cat ? 1 : rng.uniform_int(1, 2);
      for (int k = 0; k < n_in; ++k) op.inputs.push_back(acts[size_t(rng.uniform_int(0, int(acts.size()) - 1))]);
      if (rng.coin(0.2)) {
        ProgramTensor c = activation("c" + std::to_string(p.ops.size()), 8);
        c.constant = true;
        op.inputs.push_back(p.add_tensor(c));
      }
      op.outputs = {out};
      p.ops.push_back(op);
    }
    acts.push_back(out);
    if (rng.coin(0.2)) {  // a view
      ProgramTensor v = p.tensors[size_t(out)];
      v.name += ".view";
      v.alias_of = out;
      acts.push_back(p.add_tensor(v));
    }
  }
  p.outputs.push_back(acts.back());
  if (rng.coin(0.3)) p.outputs.push_back(acts[size_t(rng.uniform_int(0, int(acts.size()) - 1))]);
  return p;
}

// Valid: every op reading a tensor runs after every op writing it (views read their root).
bool valid_order(const LoweredProgram& p, const std::vector<int>& order) {
  std::vector<int> position(order.size());
  for (size_t i = 0; i < order.size(); ++i) position[size_t(order[i])] = int(i);
  for (size_t r = 0; r < p.ops.size(); ++r)
    for (int t : p.ops[r].inputs)
      for (size_t w = 0; w < p.ops.size(); ++w)
        for (int o : p.ops[w].outputs)
          if (root(p, o) == root(p, t) && !p.tensors[size_t(t)].constant && position[w] >= position[r]) return false;
  return true;
}

// The liveness peak of running the ops in `order`: per step, the aligned bytes of roots between
// their first and last use (inputs from step -1, outputs to the end).
uint32_t brute_force_peak(const LoweredProgram& p, const std::vector<int>& order) {
  const int n = int(order.size());
  std::vector<int> first(p.tensors.size(), 1 << 20), last(p.tensors.size(), -2);
  auto use = [&](int t, int step) {
    const int r = root(p, t);
    if (p.tensors[size_t(r)].constant) return;
    first[size_t(r)] = std::min(first[size_t(r)], step);
    last[size_t(r)] = std::max(last[size_t(r)], step);
  };
  for (int t : p.inputs) use(t, -1);
  for (int s = 0; s < n; ++s) {
    for (int t : p.ops[size_t(order[size_t(s)])].inputs) use(t, s);
    for (int t : p.ops[size_t(order[size_t(s)])].outputs) use(t, s);
  }
  for (int t : p.outputs) use(t, n);
  uint32_t peak = 0;
  for (int s = -1; s <= n; ++s) {
    uint32_t live = 0;
    for (size_t t = 0; t < p.tensors.size(); ++t)
      if (first[t] <= s && s <= last[t]) live += (p.tensors[t].byte_size() + 15) / 16 * 16;
    peak = std::max(peak, live);
  }
  return peak;
}

// The op order schedule_ops chose, recovered by the ops' (unique) tensor lists.
std::vector<int> chosen_order(const LoweredProgram& before, const LoweredProgram& after) {
  std::vector<int> order;
  std::vector<bool> used(before.ops.size(), false);
  for (const ProgramOp& op : after.ops) {
    for (size_t i = 0; i < before.ops.size(); ++i) {
      if (used[i] || before.ops[i].inputs != op.inputs || before.ops[i].outputs != op.outputs) continue;
      used[i] = true;
      order.push_back(int(i));
      break;
    }
  }
  return order;
}

TEST(PlannerSchedule, SmallRandomProgramsGetTheBestOrder) {
  int improved = 0;
  for (uint32_t seed = 1; seed <= 200; ++seed) {
    SCOPED_TRACE(::testing::Message() << "seed " << seed);
    const LoweredProgram before = random_dag(seed, 7);
    std::vector<int> order(before.ops.size());
    std::iota(order.begin(), order.end(), 0);
    const uint32_t exported = brute_force_peak(before, order);
    EXPECT_EQ(schedule_peak(before, order), exported);
    uint32_t best = exported;
    do {
      if (valid_order(before, order)) best = std::min(best, brute_force_peak(before, order));
    } while (std::next_permutation(order.begin(), order.end()));

    LoweredProgram after = before;
    schedule_ops(after);
    const std::vector<int> chosen = chosen_order(before, after);
    ASSERT_EQ(chosen.size(), before.ops.size());
    EXPECT_TRUE(valid_order(before, chosen));
    EXPECT_EQ(brute_force_peak(before, chosen), best);
    const bool reordered = after.schedule_report.find("\"reordered\":true") != std::string::npos;
    EXPECT_EQ(reordered, best < exported) << after.schedule_report;
    improved += reordered;
    if (::testing::Test::HasFailure()) return;
  }
  EXPECT_GT(improved, 10);
}

TEST(PlannerSchedule, GreedyFallbackIsValidAndNoWorse) {
  for (uint32_t seed = 1; seed <= 60; ++seed) {
    SCOPED_TRACE(::testing::Message() << "seed " << seed);
    const LoweredProgram before = random_dag(500 + seed, 40);
    std::vector<int> order(before.ops.size());
    std::iota(order.begin(), order.end(), 0);
    LoweredProgram after = before;
    schedule_ops(after, ScheduleOptions{1});  // no room for the exact search
    EXPECT_NE(after.schedule_report.find("\"method\":\"greedy\""), std::string::npos) << after.schedule_report;
    const std::vector<int> chosen = chosen_order(before, after);
    ASSERT_EQ(chosen.size(), before.ops.size());
    EXPECT_TRUE(valid_order(before, chosen));
    EXPECT_LE(brute_force_peak(before, chosen), brute_force_peak(before, order));
    if (::testing::Test::HasFailure()) return;
  }
}

// Two branches from x: a (one 32-channel map, pooled) and b (two 16-channel maps, pooled), then
// cat. Written a-then-b, the exported order holds a's big map while b runs.
Graph two_branches(uint32_t seed) {
  Rng rng(seed);
  tp::Builder b;
  const int x = b.input("x", {1, 8, 8, 8});
  const int a1 = b.relu(b.conv(x, b.random_constant("a1", {32, 8, 3, 3}, rng, -0.3, 0.3), -1, 1, 1));
  const int b1 = b.relu(b.conv(x, b.random_constant("b1", {16, 8, 1, 1}, rng, -0.5, 0.5), -1));
  const int b2 = b.relu(b.conv(b1, b.random_constant("b2", {16, 16, 3, 3}, rng, -0.3, 0.3), -1, 1, 1));
  const int a2 = b.max_pool(a1, 2, 2);
  const int b3 = b.max_pool(b2, 2, 2);
  b.outputs({b.cat({a2, b3}, 1)});
  return b.g;
}

TEST(PlannerSchedule, BranchesReorderedAndBitExact) {
  const Graph g = two_branches(9);
  for (bool int8 : {false, true}) {
    SCOPED_TRACE(int8 ? "int8" : "fp32");
    CompileOptions o;
    o.target = "cortex-m0";
    o.precision = int8 ? Precision::kInt8 : Precision::kFloat32;
    o.in_place = false;
    const Calibration calib = int8 ? tp::random_calibration(g, 4, 9) : Calibration{};
    o.schedule = false;
    const auto exported = compile_graph(g, o, calib);
    o.schedule = true;
    const auto scheduled = compile_graph(g, o, calib);
    tp::Runner a(exported), b(scheduled);
    ASSERT_TRUE(a.ok() && b.ok());
    EXPECT_LT(b.program().arena_lower_bound(), a.program().arena_lower_bound());
    for (uint32_t s = 1; s <= 3; ++s) EXPECT_EQ(run_program(exported, s), run_program(scheduled, s));
  }
}

}  // namespace
}  // namespace mcuflow::compiler
