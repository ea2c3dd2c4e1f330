// States (Storage::kState): tensors a program keeps between runs. Session::bind and reset_state
// give them their initial values, each run reads what the previous one left, and the verifier
// refuses a program in which anything but the state's own record writes its bytes.
#include <gtest/gtest.h>

#include <vector>

#include "../test_programs.h"

namespace mcuflow {
namespace {

using format::Storage;
using namespace tp;

// input x [1, 8] -> linear(8 -> 4) = y; state s [1, 4] (initial 0.5 ...) becomes s * 0.5 + y;
// output relu(new s): the add writes the state in place (no later op reads the state).
Graph smoothing_graph() {
  Rng rng(5);
  Builder b;
  const int x = b.input("x", {1, 8});
  const int y = b.linear(x, b.random_constant("fc.weight", {4, 8}, rng), b.random_constant("fc.bias", {4}, rng));
  Tensor s;
  s.name = "average";
  s.shape = {1, 4};
  const int state = b.g.add_tensor(s);
  const int half = b.constant("half", {1, 4}, std::vector<float>(4, 0.5f));
  const int update = b.op("add", {b.op("mul", {state, half}), y});
  b.g.states.push_back(compiler::StateTensor{state, update, {0.5f, -0.25f, 1.0f, 2.0f}});
  b.outputs({b.relu(update)});
  return b.g;
}

int state_tensor(uint8_t* f) {
  for (uint32_t t = 0; t < header(f).tensor_count; ++t) {
    if (tensor_record(f, t).storage == Storage::kState) return int(t);
  }
  return -1;
}

TEST(States, RunsCarryTheStateAndResetRestoresIt) {
  for (const bool int8 : {false, true}) {
    const std::vector<uint8_t> bytes = int8 ? compile_int8(smoothing_graph()) : compile_fp32(smoothing_graph());
    Runner r(bytes);
    ASSERT_TRUE(r.ok()) << error_name(r.error());
    const std::vector<float> x(8, 0.25f);
    r.set_input(0, x);
    ASSERT_EQ(r.run(), Error::kOk);
    const std::vector<float> first = r.output(0);
    r.set_input(0, x);
    ASSERT_EQ(r.run(), Error::kOk);
    EXPECT_NE(r.output(0), first) << "int8 " << int8;  // the second run read the first one's state
    ASSERT_EQ(r.session().reset_state(), Error::kOk);
    r.set_input(0, x);
    ASSERT_EQ(r.run(), Error::kOk);
    EXPECT_EQ(r.output(0), first) << "int8 " << int8;
  }
  EXPECT_EQ(Session().reset_state(), Error::kNotBound);
}

TEST(States, WritesOntoAStateAreRefused) {
  const std::vector<uint8_t> base = compile_fp32(smoothing_graph());
  {  // the linear layer's output moved onto the state's bytes
    AlignedBytes f(base);
    const int s = state_tensor(f.data());
    ASSERT_GE(s, 0);
    const int fc = find_op(f.data(), KernelId::fc_f32);
    ASSERT_GE(fc, 0);
    const auto& op = op_record(f.data(), uint32_t(fc));
    tensor_record(f.data(), op.tensors[op.input_count]).offset = tensor_record(f.data(), uint32_t(s)).copy_offset;
    fix_crc(f);
    EXPECT_EQ(Program::load(f.cspan(), all_kernels()).error(), Error::kBadAliasing);
  }
  {  // a second op writing the state: the relu after the add (the add wrote it in place)
    AlignedBytes f(base);
    const int s = state_tensor(f.data());
    const int relu = find_op(f.data(), KernelId::clamp_f32);
    ASSERT_GE(relu, 0);
    auto& op = op_record(f.data(), uint32_t(relu));
    op.tensors[op.input_count] = uint16_t(s);
    fix_crc(f);
    LoadFailure where;
    EXPECT_EQ(Program::load(f.cspan(), all_kernels(), &where).error(), Error::kBadAliasing);
    EXPECT_EQ(where.op, -1);  // each op passes its own checks: the state rule refuses it
  }
  {  // a state's RAM past its region
    AlignedBytes f(base);
    const int s = state_tensor(f.data());
    tensor_record(f.data(), uint32_t(s)).copy_offset = header(f.data()).arena_bytes;
    fix_crc(f);
    EXPECT_EQ(Program::load(f.cspan(), all_kernels()).error(), Error::kBadTensor);
  }
}

}  // namespace
}  // namespace mcuflow
