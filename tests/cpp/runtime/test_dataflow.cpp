// Def before use (Program::load): every byte an op or a program output reads was last written by
// an op's output, or is a program input or a copied constant. A tier kernel's scratch is written
// on a board and never by the host's reference, and bytes nothing wrote hold whatever the memory
// held: a program reading either would give different outputs on host and board although both
// accept it (as a bit flip of the DS-CNN program's output index onto a scratch once did).
#include <gtest/gtest.h>

#include <vector>

#include "../test_programs.h"

namespace mcuflow {
namespace {

using format::Storage;
using namespace tp;

// The tensor of the first op's scratch slot (the kernel writes it) and that op, or -1.
std::pair<int, int> first_scratch(uint8_t* f) {
  const KernelTable kernels = all_kernels();
  for (uint32_t i = 0; i < header(f).op_count; ++i) {
    const auto& rec = op_record(f, i);
    const uint8_t slot = kernels.entries[rec.kernel]->scratch_slot;
    if (slot != 0 && slot < rec.input_count) return {int(rec.tensors[slot]), int(i)};
  }
  return {-1, -1};
}

// An op input (not a scratch) that no op writes and that is no program input: a view sharing its
// root's bytes.
std::pair<int, int> first_view_read(uint8_t* f) {
  const auto& h = header(f);
  for (uint32_t i = 0; i < h.op_count; ++i) {
    const auto& rec = op_record(f, i);
    for (uint32_t s = 0; s < rec.input_count; ++s) {
      const uint16_t t = rec.tensors[s];
      if (s != 0 && s == all_kernels().entries[rec.kernel]->scratch_slot) continue;
      bool written = tensor_record(f, t).storage != Storage::kArena || io_table(f)[0] == t;
      for (uint32_t j = 0; j < h.op_count; ++j) {
        const auto& other = op_record(f, j);
        for (uint32_t o = other.input_count; o < uint32_t(other.input_count) + other.output_count; ++o)
          written = written || other.tensors[o] == t;
      }
      if (!written) return {int(t), int(i)};
    }
  }
  return {-1, -1};
}

TEST(Dataflow, CompiledProgramsLoad) {
  for (const char* target : {"reference", "cortex-m4", "cortex-m55", "cortex-m0"}) {
    EXPECT_EQ(load_error(compile_int8(mixed_graph(), 1, 8, false, target)), Error::kOk) << target;
    EXPECT_EQ(load_error(compile_int8(extended_graph(), 1, 8, false, target)), Error::kOk) << target;
    EXPECT_EQ(load_error(compile_int8(conv_relu_pool_linear_graph(), 1, 8, false, target)), Error::kOk) << target;
  }
  EXPECT_EQ(load_error(compile_fp32(mixed_graph())), Error::kOk);
}

// The host/board disagreement a bit flip found: the output index moved onto a tier kernel's scratch. The board
// returned what its conv kernel left there, the host what the arena held before.
TEST(Dataflow, AProgramOutputOnAScratchIsRefused) {
  AlignedBytes f(compile_int8(conv_relu_pool_linear_graph(), 1, 8, false, "cortex-m55"));
  const auto [scratch, op] = first_scratch(f.data());
  ASSERT_GE(scratch, 0) << "no tier kernel with a scratch";
  ASSERT_EQ(tensor_record(f.data(), uint32_t(scratch)).storage, Storage::kArena);
  io_table(f.data())[header(f.data()).input_count] = uint16_t(scratch);
  fix_crc(f);
  LoadFailure failure;
  EXPECT_EQ(Program::load(f.cspan(), all_kernels(), &failure).error(), Error::kUndefinedRead);
  EXPECT_EQ(failure.tensor, scratch);
  EXPECT_EQ(failure.op, -1);
}

// An op reading bytes a scratch wrote before it, and bytes nothing wrote: the linear layer's
// input (a view of the pooled image) moved onto the conv kernel's scratch, then past every tensor.
TEST(Dataflow, AnOpReadingAScratchOrUnwrittenBytesIsRefused) {
  const std::vector<uint8_t> base = compile_int8(conv_relu_pool_linear_graph(), 1, 8, false, "cortex-m55");
  AlignedBytes probe(base);
  const auto [scratch, scratch_op] = first_scratch(probe.data());
  const auto [view, reader] = first_view_read(probe.data());
  ASSERT_GE(scratch, 0);
  ASSERT_GE(view, 0) << "no view read";
  ASSERT_LT(scratch_op, reader);
  const auto& scratch_record = tensor_record(probe.data(), uint32_t(scratch));
  ASSERT_GE(scratch_record.bytes, tensor_record(probe.data(), uint32_t(view)).bytes);
  const uint32_t arena = header(probe.data()).arena_bytes;
  uint32_t slot = 0;
  while (op_record(probe.data(), uint32_t(reader)).tensors[slot] != view) ++slot;
  for (const uint32_t offset : {scratch_record.offset, arena}) {
    AlignedBytes f(base);
    header(f.data()).arena_bytes = arena + 1024;
    tensor_record(f.data(), uint32_t(view)).offset = offset;
    fix_crc(f);
    LoadFailure failure;
    EXPECT_EQ(Program::load(f.cspan(), all_kernels(), &failure).error(), Error::kUndefinedRead) << offset;
    EXPECT_EQ(failure.op, reader);
    EXPECT_EQ(failure.slot, int(slot));
  }
  AlignedBytes moved_arena(base);  // the arena alone grown: still loads
  header(moved_arena.data()).arena_bytes = arena + 1024;
  fix_crc(moved_arena);
  EXPECT_EQ(Program::load(moved_arena.cspan(), all_kernels()).error(), Error::kOk);
}

// A cat slice writes its columns of every outer row: two slices that overlap leave columns
// nothing wrote, which the op after the cat reads.
TEST(Dataflow, CatSlicesThatLeaveAGapAreRefused) {
  Rng rng(3);
  Builder b;
  const int x = b.input("x", {1, 4, 5, 5});
  const int w1 = b.random_constant("a.weight", {3, 4, 1, 1}, rng, -0.5, 0.5);
  const int w2 = b.random_constant("b.weight", {3, 4, 1, 1}, rng, -0.5, 0.5);
  const int cat = b.cat({b.conv(x, w1, -1), b.relu(b.conv(x, w2, -1))}, 1);
  const int w3 = b.random_constant("c.weight", {2, 6, 1, 1}, rng, -0.5, 0.5);
  b.outputs({b.conv(cat, w3, -1)});
  const std::vector<uint8_t> base = compile_int8(b.g, 1, 8);
  AlignedBytes probe(base);
  ASSERT_EQ(load_error(base), Error::kOk);
  std::vector<uint32_t> slices;
  for (uint32_t i = 0; i < header(probe.data()).op_count; ++i) {
    if (op_record(probe.data(), i).kernel == uint16_t(KernelId::concat_slice_s8)) slices.push_back(i);
  }
  ASSERT_EQ(slices.size(), 2u);
  const auto& second = params_as<kernels::ConcatSliceParams>(probe.data(), slices[1]);
  ASSERT_EQ(second.outer, 25) << "NHWC: one row of channels per pixel";
  ASSERT_EQ(second.offset_c, 3);
  // The cat's output past every other tensor, so that only the slices write its bytes.
  const uint32_t arena = header(probe.data()).arena_bytes, out = op_record(probe.data(), slices[0]).tensors[1];
  auto moved = [&](int32_t offset_c) {
    AlignedBytes f(base);
    header(f.data()).arena_bytes = arena + (tensor_record(f.data(), out).bytes + 15) / 16 * 16;
    tensor_record(f.data(), out).offset = arena;
    params_as<kernels::ConcatSliceParams>(f.data(), slices[1]).offset_c = offset_c;
    fix_crc(f);
    return f;
  };
  EXPECT_EQ(Program::load(moved(3).cspan(), all_kernels()).error(), Error::kOk);
  LoadFailure failure;
  EXPECT_EQ(Program::load(moved(2).cspan(), all_kernels(), &failure).error(), Error::kUndefinedRead)
      << "channel 5 of each pixel unwritten";
  EXPECT_EQ(failure.op, int(slices[1]) + 1);
  EXPECT_EQ(failure.slot, 0);
}

}  // namespace
}  // namespace mcuflow
