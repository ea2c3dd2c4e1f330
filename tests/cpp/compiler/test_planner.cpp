// Memory planner (compiler/src/planner.cpp): for random op chains and DAGs — built directly as
// LoweredProgram structures, and lowered from random graphs — a brute-force check that no two
// tensors live at the same op overlap, every tensor lies inside the arena, and the recorded lower
// bound equals an independent computation and never exceeds the arena.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>

#include "../test_programs.h"
#include "mcuflow/compiler/lower.h"
#include "mcuflow/compiler/passes.h"
#include "mcuflow/compiler/planner.h"
#include "mcuflow/compiler/quantizer.h"

namespace mcuflow::compiler {
namespace {

using tp::Rng;

uint32_t aligned(uint32_t n) { return (n + 15) / 16 * 16; }

int root(const LoweredProgram& p, int t) { return p.tensors[size_t(t)].alias_of >= 0 ? p.tensors[size_t(t)].alias_of : t; }

// Steps at which each root arena tensor is in use: -1 for a program input, the op index for an
// op's inputs and outputs (views count for their root), op_count for a program output.
std::vector<std::set<int>> uses(const LoweredProgram& p) {
  std::vector<std::set<int>> u(p.tensors.size());
  auto use = [&](int t, int step) {
    const int r = root(p, t);
    if (!p.tensors[size_t(r)].constant) u[size_t(r)].insert(step);
  };
  for (int t : p.inputs) use(t, -1);
  for (size_t i = 0; i < p.ops.size(); ++i) {
    for (int t : p.ops[i].inputs) use(t, int(i));
    for (int t : p.ops[i].outputs) use(t, int(i));
  }
  for (int t : p.outputs) use(t, int(p.ops.size()));
  return u;
}

// Live at `step`: first use <= step <= last use.
bool live_at(const std::set<int>& u, int step) { return !u.empty() && *u.begin() <= step && step <= *u.rbegin(); }

// Bytes roots `a` and `b` share because one is an op output written in place over the other
// (a dying input), by their planned offsets; 0 for any other pair.
uint32_t in_place_shared(const LoweredProgram& p, size_t a, size_t b) {
  const ProgramTensor& x = p.tensors[a];
  const ProgramTensor& y = p.tensors[b];
  const bool pair = (x.in_place_of >= 0 && size_t(root(p, x.in_place_of)) == b) ||
                    (y.in_place_of >= 0 && size_t(root(p, y.in_place_of)) == a);
  const int64_t shared = std::min<int64_t>(x.offset + aligned(x.byte_size()), y.offset + aligned(y.byte_size())) -
                         std::max<int64_t>(x.offset, y.offset);
  return pair && shared > 0 ? uint32_t(shared) : 0;
}

uint32_t brute_force_lower_bound(const LoweredProgram& p) {
  const auto u = uses(p);
  uint32_t best = 0;
  for (int step = -1; step <= int(p.ops.size()); ++step) {
    uint32_t total = 0;
    for (size_t t = 0; t < p.tensors.size(); ++t) {
      if (live_at(u[t], step)) total += aligned(p.tensors[t].byte_size());
      for (size_t o = t + 1; o < p.tensors.size(); ++o)
        if (live_at(u[t], step) && live_at(u[o], step)) total -= in_place_shared(p, t, o);
    }
    best = std::max(best, total);
  }
  return best;
}

// Every violated invariant of a planned program, as messages; `reuse == false` means no two
// roots may ever share bytes.
std::vector<std::string> plan_violations(const LoweredProgram& p, bool reuse) {
  std::vector<std::string> bad;
  auto fail = [&](const std::string& m) { bad.push_back(m); };
  const auto u = uses(p);
  if (p.arena_bytes % 16 != 0) fail("arena size not a multiple of 16");
  for (size_t t = 0; t < p.tensors.size(); ++t) {
    const ProgramTensor& pt = p.tensors[t];
    if (pt.constant) continue;
    const int r = root(p, int(t));
    if (u[size_t(r)].empty()) continue;  // never used: never placed
    if (pt.offset % 16 != 0) fail(pt.name + " misaligned");
    if (pt.offset != p.tensors[size_t(r)].offset) fail("view " + pt.name + " does not share its root's bytes");
    if (uint64_t(pt.offset) + pt.byte_size() > p.arena_bytes) fail(pt.name + " lies outside the arena");
  }
  // Pairwise: roots live at a common step never overlap in memory.
  for (size_t a = 0; a < p.tensors.size(); ++a) {
    for (size_t b = a + 1; b < p.tensors.size(); ++b) {
      if (u[a].empty() || u[b].empty()) continue;
      bool together = !reuse;
      for (int step = -1; step <= int(p.ops.size()) && !together; ++step) together = live_at(u[a], step) && live_at(u[b], step);
      if (!together) continue;
      if (in_place_shared(p, a, b) > 0) {  // an in-place op: its output must start far enough below or above
        const size_t out = p.tensors[a].in_place_of >= 0 && size_t(root(p, p.tensors[a].in_place_of)) == b ? a : b;
        const size_t in = out == a ? b : a;
        for (const ProgramOp& op : p.ops) {
          if (op.outputs.empty() || size_t(op.outputs[0]) != out) continue;
          const auto slot = size_t(std::find(op.inputs.begin(), op.inputs.end(), p.tensors[out].in_place_of) - op.inputs.begin());
          const int64_t below = int64_t(p.tensors[in].offset) - p.tensors[out].offset;
          const int64_t need_below = in_place_shift(p, op, slot), need_above = in_place_shift_above(p, op, slot);
          if (!(need_below >= 0 && below >= need_below) && !(need_above >= 0 && -below >= need_above))
            fail(p.tensors[out].name + " is written in place too close to " + p.tensors[in].name);
        }
        continue;
      }
      const uint32_t a0 = p.tensors[a].offset, a1 = a0 + p.tensors[a].byte_size();
      const uint32_t b0 = p.tensors[b].offset, b1 = b0 + p.tensors[b].byte_size();
      if (!(a1 <= b0 || b1 <= a0)) {
        fail(p.tensors[a].name + " [" + std::to_string(a0) + ", " + std::to_string(a1) + ") and " + p.tensors[b].name + " [" +
             std::to_string(b0) + ", " + std::to_string(b1) + ") are live together");
      }
    }
  }
  const uint32_t bound = brute_force_lower_bound(p);
  if (p.arena_lower_bound != bound) fail("recorded lower bound " + std::to_string(p.arena_lower_bound) + " != " + std::to_string(bound));
  if (liveness_lower_bound(p) != bound) fail("liveness_lower_bound() != " + std::to_string(bound));
  if (p.arena_bytes < bound) fail("arena below the lower bound");
  if (!reuse) {
    uint32_t sum = 0;
    for (size_t t = 0; t < p.tensors.size(); ++t) sum += u[t].empty() ? 0 : aligned(p.tensors[t].byte_size());
    if (p.arena_bytes != sum) fail("without reuse the roots are not packed end to end");
  }
  // root_lifetimes agrees with the brute-force uses.
  const auto life = root_lifetimes(p);
  for (size_t t = 0; t < p.tensors.size(); ++t) {
    if (u[t].empty() ? life[t].first <= life[t].last : (life[t].first != *u[t].begin() || life[t].last != *u[t].rbegin()))
      fail("root_lifetimes disagrees for " + p.tensors[t].name);
  }
  return bad;
}

void check_plan(const LoweredProgram& p, bool reuse) {
  const auto bad = plan_violations(p, reuse);
  for (const auto& m : bad) ADD_FAILURE() << m;
}

ProgramTensor tensor(const std::string& name, Rng& rng, bool constant = false) {
  ProgramTensor t;
  t.name = name;
  t.dtype = rng.coin() ? format::DType::kInt8 : format::DType::kFloat32;
  t.dims = {int32_t(rng.uniform_int(1, rng.coin(0.2) ? 2000 : 100))};
  t.constant = constant;
  return t;
}

// A random program: ops read 1-3 earlier tensors (activations, views, constants) and write one or
// two new tensors; some tensors are views of others; some are never used at all.
LoweredProgram random_program(uint32_t seed, bool chain) {
  Rng rng(seed);
  LoweredProgram p;
  std::vector<int> acts;
  const int n_inputs = rng.uniform_int(1, 3);
  for (int i = 0; i < n_inputs; ++i) {
    acts.push_back(p.add_tensor(tensor("in" + std::to_string(i), rng)));
    p.inputs.push_back(acts.back());
  }
  const int n_ops = rng.uniform_int(1, 25);
  for (int i = 0; i < n_ops; ++i) {
    ProgramOp op;
    op.kernel = KernelId::clamp_s8;
    if (chain) {
      op.inputs.push_back(acts.back());
    } else {
      const int n_in = rng.uniform_int(1, 3);
      for (int k = 0; k < n_in; ++k) op.inputs.push_back(acts[size_t(rng.uniform_int(0, int(acts.size()) - 1))]);
    }
    if (rng.coin(0.3)) op.inputs.push_back(p.add_tensor(tensor("const" + std::to_string(i), rng, true)));
    const int n_out = rng.coin(0.15) ? 2 : 1;
    for (int k = 0; k < n_out; ++k) {
      op.outputs.push_back(p.add_tensor(tensor("t" + std::to_string(i) + "_" + std::to_string(k), rng)));
      acts.push_back(op.outputs.back());
    }
    p.ops.push_back(op);
    if (rng.coin(0.25)) {  // a view of a recent tensor (or of a view: resolved to the root)
      const int of = acts[size_t(rng.uniform_int(0, int(acts.size()) - 1))];
      ProgramTensor v = p.tensors[size_t(of)];
      v.name = "view" + std::to_string(i);
      v.alias_of = root(p, of);
      if (v.dims[0] > 1 && rng.coin()) v.dims[0] /= 2;  // a smaller view of the same bytes
      acts.push_back(p.add_tensor(v));
    }
    if (rng.coin(0.1)) p.add_tensor(tensor("unused" + std::to_string(i), rng));
  }
  p.outputs.push_back(acts.back());
  if (rng.coin(0.4)) p.outputs.push_back(acts[size_t(rng.uniform_int(0, int(acts.size()) - 1))]);
  return p;
}

TEST(Planner, RandomChains) {
  for (uint32_t seed = 1; seed <= 150; ++seed) {
    SCOPED_TRACE(::testing::Message() << "seed " << seed);
    LoweredProgram p = random_program(seed, true);
    plan_memory(p);
    check_plan(p, true);
    if (::testing::Test::HasFailure()) return;
  }
}

TEST(Planner, RandomDags) {
  for (uint32_t seed = 1; seed <= 300; ++seed) {
    SCOPED_TRACE(::testing::Message() << "seed " << seed);
    LoweredProgram p = random_program(1000 + seed, false);
    plan_memory(p);
    check_plan(p, true);
    if (::testing::Test::HasFailure()) return;
  }
}

TEST(Planner, WithoutReuseEveryTensorHasItsOwnBytes) {
  for (uint32_t seed = 1; seed <= 100; ++seed) {
    SCOPED_TRACE(::testing::Message() << "seed " << seed);
    LoweredProgram p = random_program(5000 + seed, false);
    plan_memory(p, false);
    check_plan(p, false);
    if (::testing::Test::HasFailure()) return;
  }
}

TEST(Planner, HandWorkedChain) {
  // in(100) -> a(1000) -> b(50) -> c(1000) -> out(20): the two 1000-byte tensors never meet.
  LoweredProgram p;
  auto t = [&](const char* name, int32_t bytes) {
    ProgramTensor pt;
    pt.name = name;
    pt.dims = {bytes};
    return p.add_tensor(pt);
  };
  const int in = t("in", 100), a = t("a", 1000), b = t("b", 50), c = t("c", 1000), out = t("out", 20);
  auto op = [&](int x, int y) {
    ProgramOp o;
    o.kernel = KernelId::clamp_s8;
    o.inputs = {x};
    o.outputs = {y};
    p.ops.push_back(o);
  };
  op(in, a);
  op(a, b);
  op(b, c);
  op(c, out);
  p.inputs = {in};
  p.outputs = {out};
  plan_memory(p);
  check_plan(p, true);
  // Live sets: {in,a}=112+1008, {a,b}=1008+64, {b,c}=64+1008, {c,out}=1008+32.
  EXPECT_EQ(p.arena_lower_bound, 1120u);
  EXPECT_EQ(p.tensors[size_t(a)].offset, p.tensors[size_t(c)].offset) << "greedy by size puts both big tensors at 0";
  EXPECT_EQ(p.arena_bytes, 1120u);
}

// The checker itself catches broken plans.
TEST(Planner, CheckerCatchesBrokenPlans) {
  LoweredProgram p = random_program(77, true);
  plan_memory(p);
  ASSERT_TRUE(plan_violations(p, true).empty());
  ASSERT_GE(p.ops.size(), 1u);
  const int in = p.ops[0].inputs[0], out = p.ops[0].outputs[0];
  LoweredProgram overlap = p;
  overlap.tensors[size_t(out)].offset = overlap.tensors[size_t(in)].offset;  // input and output of one op
  EXPECT_FALSE(plan_violations(overlap, true).empty());
  LoweredProgram outside = p;
  outside.tensors[size_t(out)].offset = outside.arena_bytes;
  EXPECT_FALSE(plan_violations(outside, true).empty());
  LoweredProgram bound = p;
  bound.arena_lower_bound += 16;
  EXPECT_FALSE(plan_violations(bound, true).empty());
}

// Programs lowered from random graphs (int8 and fp32), planned as the pipeline does.
TEST(Planner, LoweredRandomGraphs) {
  int checked = 0;
  for (uint32_t seed = 1; seed <= 40; ++seed) {
    SCOPED_TRACE(::testing::Message() << "seed " << seed);
    Graph g = tp::random_graph(seed, 12);
    run_graph_passes(g);
    for (Precision precision : {Precision::kFloat32, Precision::kInt8}) {
      Graph q = g;
      if (precision == Precision::kInt8) {
        calibrate(q, tp::random_calibration(q, 4, seed));
        assign_quantization(q);
      }
      LoweredProgram p = lower(q, LowerOptions{precision, false});
      plan_memory(p);
      check_plan(p, true);
      ++checked;
    }
    if (::testing::Test::HasFailure()) return;
  }
  EXPECT_EQ(checked, 80);
}

// The planned arena is what the runtime needs: every random graph compiles, loads, binds an
// exactly sized arena and runs inside it.
TEST(Planner, CompiledRandomGraphsRunInsideTheirArena) {
  for (uint32_t seed = 1; seed <= 40; ++seed) {
    SCOPED_TRACE(::testing::Message() << "seed " << seed);
    const Graph g = tp::random_graph(seed, 12);
    for (bool int8 : {false, true}) {
      const std::vector<uint8_t> bytes = int8 ? tp::compile_int8(g, seed, 4) : tp::compile_fp32(g);
      tp::Runner r(bytes);
      ASSERT_TRUE(r.ok()) << error_name(r.error());
      EXPECT_GE(r.program().arena_bytes(), r.program().arena_lower_bound());
      Rng rng(seed);
      for (uint32_t i = 0; i < r.program().input_count(); ++i) r.set_input(i, rng.floats(r.program().input(i).bytes / 4, -1, 1));
      ASSERT_EQ(r.run(), Error::kOk);
      EXPECT_TRUE(r.arena().guards_intact());
    }
  }
}

}  // namespace
}  // namespace mcuflow::compiler
