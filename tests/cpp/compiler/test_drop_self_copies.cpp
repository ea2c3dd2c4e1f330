// drop_self_copies (compiler/src/passes/drop_self_copies.cpp): the band slices and band outputs
// that the planner puts inside the input and the stage output lose their copy ops; every part
// is planned where its copy would have read it from and lives while its host does. (That banded
// programs, compiled without these copies, compute the unbanded values: test_split_into_patches.)
#include <gtest/gtest.h>

#include <algorithm>

#include "../test_programs.h"
#include "mcuflow/compiler/compile.h"
#include "mcuflow/compiler/kernel_selection.h"
#include "mcuflow/compiler/lower.h"
#include "mcuflow/compiler/passes.h"
#include "mcuflow/compiler/planner.h"

namespace mcuflow::compiler {
namespace {

using tp::Builder;
using tp::Rng;

// input [1, 3, 32, 32] -> conv 3x3 (8) -> depthwise 3x3 stride 2 -> conv 1x1 (16) -> mean, each
// conv + relu, in `bands` bands.
Graph banded_chain(int bands) {
  Rng rng(5);
  Builder b;
  int x = b.input("x", {1, 3, 32, 32});
  const int w0 = b.random_constant("w0", {8, 3, 3, 3}, rng, -0.5, 0.5), b0 = b.random_constant("b0", {8}, rng);
  x = b.relu(b.conv(x, w0, b0, 1, 1, 1, 1));
  const int w1 = b.random_constant("w1", {8, 1, 3, 3}, rng, -0.5, 0.5), b1 = b.random_constant("b1", {8}, rng);
  x = b.relu(b.conv(x, w1, b1, 2, 1, 8, 1));
  const int w2 = b.random_constant("w2", {16, 8, 1, 1}, rng, -0.5, 0.5), b2 = b.random_constant("b2", {16}, rng);
  x = b.relu(b.conv(x, w2, b2, 1, 0, 1, 1));
  b.outputs({b.mean_hw(x, false)});
  run_graph_passes(b.g);
  if (bands > 1) split_into_patches(b.g, bands, 4);
  return b.g;
}

bool is_copy(KernelId k) {
  return k == KernelId::strided_copy_b32 || k == KernelId::concat_slice_f32;
}

TEST(DropSelfCopies, BandCopiesAreDroppedAndPartsStayInsideTheirHosts) {
  const int bands = 4;
  LoweredProgram p = lower(banded_chain(bands), LowerOptions{Precision::kFloat32, false});
  select_kernels(p, find_target("reference").features);
  const size_t ops = p.ops.size();
  const auto copies = size_t(std::count_if(p.ops.begin(), p.ops.end(), [](const ProgramOp& op) { return is_copy(op.kernel); }));
  ASSERT_EQ(copies, size_t(2 * bands)) << "a slice per band and a cat slice per band output";

  drop_self_copies(p);
  EXPECT_EQ(p.ops.size(), ops - copies);
  EXPECT_TRUE(std::none_of(p.ops.begin(), p.ops.end(), [](const ProgramOp& op) { return is_copy(op.kernel); }));
  ASSERT_EQ(p.dropped_copies.size(), copies);
  plan_memory(p);
  const std::vector<Lifetime> life = root_lifetimes(p);
  for (const Embedding& e : p.dropped_copies) {
    const ProgramTensor &part = p.tensors[size_t(e.part)], &host = p.tensors[size_t(e.host)];
    EXPECT_EQ(int64_t(part.offset), int64_t(host.offset) + e.offset) << part.name;
    EXPECT_GE(e.offset, 0);
    EXPECT_LE(e.offset + int64_t(part.byte_size()), int64_t(host.byte_size())) << part.name;
    // Its bytes hold its values from the host's write (a slice) to the host's last read (a cat).
    EXPECT_LE(life[size_t(e.part)].first, life[size_t(e.host)].first) << part.name;
    EXPECT_GE(life[size_t(e.part)].last, life[size_t(e.host)].last) << part.name;
  }
  // The band rows of the program input hold their values from the program's start.
  for (const Embedding& e : p.dropped_copies)
    if (e.host == p.inputs[0]) EXPECT_EQ(life[size_t(e.part)].first, -1);
}

}  // namespace
}  // namespace mcuflow::compiler
