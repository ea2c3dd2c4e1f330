// Parameter fuzz of the operator-coverage adapters (runtime/src/ops/strided_copy.cpp,
// avgpool_include_pad.cpp, activation.cpp, binary.cpp's sub/minimum/maximum, reduce.cpp,
// transpose_conv.cpp, batch_matmul.cpp, group_norm.cpp): every 32-bit field of their params is
// set to edge and random values; the verifier either rejects the program with kBadParams or the
// program runs and touches nothing outside its arena (ASan checks reads too in test-sanitize).
#include <gtest/gtest.h>

#include <climits>
#include <cstdio>
#include <cstring>
#include <set>

#include "../test_programs.h"

namespace mcuflow {
namespace {

using namespace tp;

// Operator-coverage ops the extended graph lacks: include-pad pooling, max reduction, float
// activations in fp32 programs, minimum, a matmul of a tensor with its transpose, a group norm.
Graph more_ops_graph() {
  Builder b;
  Rng rng(17);
  const int image = b.input("x", {1, 3, 5, 5});
  const int x = b.op("group_norm", {image, b.random_constant("gw", {3}, rng), b.random_constant("gb", {3}, rng)},
                     {{"groups", int64_t(3)}, {"eps", 1e-5}});
  const int pooled = b.op("avg_pool2d", {x},
                          {{"kernel", std::vector<int64_t>{3, 3}},
                           {"stride", std::vector<int64_t>{2, 2}},
                           {"padding", std::vector<int64_t>{1, 1}},
                           {"ceil_mode", int64_t(0)},
                           {"count_include_pad", int64_t(1)}});
  const int peak = b.op("amax", {pooled}, {{"dims", std::vector<int64_t>{1}}, {"keepdim", int64_t(0)}});
  const int g = b.op("gelu", {b.op("minimum", {peak, b.op("neg", {peak})})}, {{"approximate", int64_t(0)}});
  b.outputs({b.op("matmul", {g, b.permute(g, {0, 2, 1})})});
  return b.g;
}

// Ids 26-45, and the group norms (the compiler emits group_norm_f32 where it emitted
// layer_norm_f32, 46, before; 47 is read_input_rows, which has no params to fuzz).
bool is_new_kernel(uint16_t id) {
  return (id >= uint16_t(KernelId::strided_copy_b8) && id <= uint16_t(KernelId::batch_matmul_f32)) ||
         id == uint16_t(KernelId::group_norm_s8) || id == uint16_t(KernelId::group_norm_f32);
}

TEST(NewOpParams, FieldFuzzIsRejectedOrRunsInsideTheArena) {
  const std::vector<std::vector<uint8_t>> programs = {compile_int8(extended_graph()), compile_fp32(extended_graph()),
                                                      compile_int8(more_ops_graph()), compile_fp32(more_ops_graph())};
  Rng rng(4242);
  std::set<uint16_t> kernels_fuzzed;
  int rejected = 0, ran = 0;
  for (const auto& base : programs) {
    AlignedBytes probe(base);
    for (uint32_t op = 0; op < header(probe.data()).op_count; ++op) {
      const format::OpRecord& record = op_record(probe.data(), op);
      if (!is_new_kernel(record.kernel)) continue;
      kernels_fuzzed.insert(record.kernel);
      const uint32_t fields = record.params_bytes / 4;
      for (int it = 0; it < 150; ++it) {
        AlignedBytes file(base);
        int32_t* params = reinterpret_cast<int32_t*>(op_params(file.data(), op));
        const uint32_t field = uint32_t(rng.uniform_int(0, int32_t(fields) - 1));
        static const int32_t kEdges[] = {0, 1, -1, 2, INT32_MIN, INT32_MAX, 1 << 16, (1 << 16) + 1, 1 << 24, -(1 << 16)};
        switch (it % 3) {
          case 0: params[field] = kEdges[rng.uniform_int(0, int32_t(std::size(kEdges)) - 1)]; break;
          case 1: params[field] = rng.uniform_int(-300, 300); break;
          default: params[field] += rng.uniform_int(-3, 3); break;
        }
        fix_crc(file);
        auto program = Program::load(file.cspan(), all_kernels());
        if (!program.ok()) {
          ASSERT_EQ(program.error(), Error::kBadParams) << "kernel " << record.kernel << " field " << field;
          ++rejected;
          continue;
        }
        GuardedArena arena(program.value().arena_bytes());
        auto session = Session::bind(program.value(), arena.span());
        ASSERT_TRUE(session.ok());
        fill_inputs_randomly(program.value(), session.value(), rng);
        ASSERT_EQ(session.value().run(), Error::kOk);
        ASSERT_TRUE(arena.guards_intact()) << "kernel " << record.kernel << " field " << field << " wrote outside";
        ++ran;
      }
    }
  }
  std::printf("new-op params fuzz: %zu kernels, %d programs rejected (bad_params), %d ran inside their arena\n",
              kernels_fuzzed.size(), rejected, ran);
  // Every kernel is_new_kernel names was fuzzed.
  EXPECT_EQ(kernels_fuzzed.size(), size_t(KernelId::batch_matmul_f32) - size_t(KernelId::strided_copy_b8) + 1 + 2);
  EXPECT_GT(rejected, 0);
  EXPECT_GT(ran, 0);
}

}  // namespace
}  // namespace mcuflow
