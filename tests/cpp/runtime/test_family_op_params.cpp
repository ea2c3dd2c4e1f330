// The adapters of the model-family kernels (runtime/src/ops/prelu.cpp, resize_bilinear.cpp):
// every 32-bit field of their params set to edge and random values is either rejected with
// kBadParams or runs inside the arena; a bilinear source index outside the input, or an int8
// weight above 2^kResizeWeightBits, is rejected at load (the host refuses what a board refuses).
#include <gtest/gtest.h>

#include <climits>
#include <set>

#include "params_fuzz.h"
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
  ParamsFuzz fuzz;
  ASSERT_NO_FATAL_FAILURE(fuzz_op_params(programs, is_family_kernel, rng, fuzz));
  EXPECT_EQ(fuzz.kernels.size(), 4u);
  EXPECT_GT(fuzz.rejected, 0);
  EXPECT_GT(fuzz.ran, 0);
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
