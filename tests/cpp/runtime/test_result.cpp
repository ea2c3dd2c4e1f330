// Result and Error hardened: a failed Result's value is an empty object that
// every accessor handles (no undefined behaviour for code that skips ok()), and a Result is ok
// only with a value.
#include <gtest/gtest.h>

#include <cstring>

#include "../test_programs.h"

namespace mcuflow {
namespace {

using namespace tp;

TEST(Result, AResultMadeFromOkIsNotOk) {
  const Result<uint32_t> r(Error::kOk);
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(r.error(), Error::kBadArgument);
  EXPECT_EQ(r.value_or(7u), 7u);
  EXPECT_EQ(Result<uint32_t>(5u).value_or(7u), 5u);
}

TEST(Result, AFailedProgramsValueHasNoRecords) {
  AlignedBytes f(compile_int8(tiny_graph()));
  std::memset(f.data(), 0, 4);  // bad magic
  const Result<Program> r = Program::load(f.cspan(), all_kernels());
  ASSERT_EQ(r.error(), Error::kBadMagic);
  const Program& p = r.value();
  EXPECT_EQ(p.op_count(), 0u);
  EXPECT_EQ(p.tensor_count(), 0u);
  EXPECT_EQ(p.input_count(), 0u);
  EXPECT_EQ(p.output_count(), 0u);
  EXPECT_EQ(p.arena_bytes(), 0u);
  EXPECT_EQ(p.region_count(), 0u);
  EXPECT_EQ(p.region_bytes(0), 0u);
  EXPECT_EQ(p.input(0).rank, 0u);
  EXPECT_EQ(p.output(0).dims, nullptr);
  EXPECT_EQ(p.tensor(3).bytes, 0u);
  EXPECT_EQ(p.metadata().size, 0u);
  EXPECT_EQ(Session::bind(p, Span<uint8_t>{}).error(), Error::kNotBound);
  const Result<Session> s = Session::bind(p, Span<uint8_t>{});
  EXPECT_EQ(s.value().run(), Error::kNotBound);
  EXPECT_EQ(s.value().input_buffer(0).value().data, nullptr);
}

TEST(Result, IndicesPastACountGiveEmptyInfo) {
  AlignedBytes f(compile_int8(tiny_graph()));
  const Result<Program> r = Program::load(f.cspan(), all_kernels());
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.value().input(r.value().input_count()).rank, 0u);
  EXPECT_EQ(r.value().output(r.value().output_count()).bytes, 0u);
  EXPECT_EQ(r.value().tensor(r.value().tensor_count()).dims, nullptr);
  EXPECT_GT(r.value().input(0).rank, 0u);
}

}  // namespace
}  // namespace mcuflow
