// The adapters of the model-family kernels (runtime/src/ops/prelu.cpp, resize_bilinear.cpp):
// every 32-bit field of their params set to edge and random values is either rejected with
// kBadParams or runs inside the arena; a bilinear source index outside the input, or an int8
// weight above 2^kResizeWeightBits, is rejected at load (the host refuses what a board refuses).
#include <gtest/gtest.h>

#include <climits>
#include <set>

#include "../test_programs.h"
#include "mcuflow/kernels/params.h"

namespace mcuflow {
namespace {

using namespace tp;

Graph prelu_bilinear_graph() {
  Builder b;
  const int x = b.input("x", {1, 3, 4, 5});
  const int slopes = b.constant("slopes", {3}, {0.25f, -0.5f, 1.5f});
  const int y = b.op("prelu", {x, slopes});
  b.outputs({b.op("upsample_bilinear2d", {y},
                  {{"size", std::vector<int64_t>{7, 9}}, {"align_corners", int64_t(0)}, {"scale_h", 0.0},
                   {"scale_w", 0.0}})});
  return b.g;
}

bool is_family_kernel(uint16_t id) {
  return id == uint16_t(KernelId::prelu_s8) || id == uint16_t(KernelId::prelu_f32) ||
         id == uint16_t(KernelId::resize_bilinear_s8) || id == uint16_t(KernelId::resize_bilinear_f32);
}

TEST(FamilyOpParams, FieldFuzzIsRejectedOrRunsInsideTheArena) {
  const std::vector<std::vector<uint8_t>> programs = {compile_int8(prelu_bilinear_graph()),
                                                      compile_fp32(prelu_bilinear_graph())};
  Rng rng(2121);
  std::set<uint16_t> kernels_fuzzed;
  int rejected = 0, ran = 0;
  for (const auto& base : programs) {
    AlignedBytes probe(base);
    for (uint32_t op = 0; op < header(probe.data()).op_count; ++op) {
      const format::OpRecord& record = op_record(probe.data(), op);
      if (!is_family_kernel(record.kernel)) continue;
      kernels_fuzzed.insert(record.kernel);
      const uint32_t fields = record.params_bytes / 4;
      for (int it = 0; it < 150; ++it) {
        AlignedBytes file(base);
        int32_t* params = reinterpret_cast<int32_t*>(op_params(file.data(), op));
        const uint32_t field = uint32_t(rng.uniform_int(0, int32_t(fields) - 1));
        static const int32_t kEdges[] = {0, 1, -1, 2, INT32_MIN, INT32_MAX, 1 << 16, (1 << 16) + 1, -(1 << 16)};
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
  EXPECT_EQ(kernels_fuzzed.size(), 4u);
  EXPECT_GT(rejected, 0);
  EXPECT_GT(ran, 0);
}

// The constant input `slot` of the first op running `kernel`, as int32 values.
int32_t* op_constant(AlignedBytes& file, KernelId kernel, uint32_t slot) {
  const int op = find_op(file.data(), kernel);
  EXPECT_GE(op, 0);
  return reinterpret_cast<int32_t*>(constant_data(file.data(), op_record(file.data(), uint32_t(op)).tensors[slot]));
}

TEST(FamilyOpParams, BilinearTablesOutsideTheInputAreRejected) {
  for (const bool int8 : {true, false}) {
    const auto base = int8 ? compile_int8(prelu_bilinear_graph()) : compile_fp32(prelu_bilinear_graph());
    const KernelId kernel = int8 ? KernelId::resize_bilinear_s8 : KernelId::resize_bilinear_f32;
    ASSERT_EQ(load_error(base), Error::kOk);
    // taps: 7 rows (2 each, below in_h = 4), then 9 columns (below in_w = 5)
    for (const auto& [index, value] : {std::pair{0, 4}, std::pair{13, -1}, std::pair{14, 5}, std::pair{31, 5}}) {
      AlignedBytes file(base);
      op_constant(file, kernel, 1)[index] = value;
      fix_crc(file);
      EXPECT_EQ(load_error(file.data(), file.size()), Error::kBadParams) << "tap " << index << " = " << value;
    }
    if (!int8) continue;
    for (const int32_t weight : {-1, (1 << kernels::kResizeWeightBits) + 1}) {
      AlignedBytes file(base);
      op_constant(file, kernel, 2)[3] = weight;
      fix_crc(file);
      EXPECT_EQ(load_error(file.data(), file.size()), Error::kBadParams) << "weight " << weight;
    }
  }
}

}  // namespace
}  // namespace mcuflow
