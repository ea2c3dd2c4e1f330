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

#include "params_fuzz.h"

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
  ParamsFuzz fuzz;
  ASSERT_NO_FATAL_FAILURE(fuzz_op_params(programs, is_new_kernel, rng, fuzz));
  std::printf("new-op params fuzz: %zu kernels, %d programs rejected (bad_params), %d ran inside their arena\n",
              fuzz.kernels.size(), fuzz.rejected, fuzz.ran);
  // Every kernel is_new_kernel names was fuzzed.
  EXPECT_EQ(fuzz.kernels.size(), size_t(KernelId::batch_matmul_f32) - size_t(KernelId::strided_copy_b8) + 1 + 2);
  EXPECT_GT(fuzz.rejected, 0);
  EXPECT_GT(fuzz.ran, 0);
}

}  // namespace
}  // namespace mcuflow
