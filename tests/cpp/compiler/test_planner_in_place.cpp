// In-place execution (compiler/src/planner.cpp in_place_shift, plan_memory): each kernel the
// planner lets run in place computes the same bytes when its output starts the planned number of
// bytes below its input in one buffer as when the two are apart; whole programs compiled with
// and without in-place execution give identical outputs.
#include <gtest/gtest.h>

#include <cstring>
#include <string>

#include "../test_programs.h"
#include "planner_test_util.h"
#include "mcuflow/compiler/planner.h"
#include "mcuflow/kernels/kernels.h"

namespace mcuflow::compiler {
namespace {

using planner_test::run_program;
using tp::Rng;
namespace k = mcuflow::kernels;

template <typename P>
std::vector<uint8_t> bytes_of(const P& p) {
  std::vector<uint8_t> b(sizeof(P));
  std::memcpy(b.data(), &p, sizeof(P));
  return b;
}

// A one-op program: input tensor 0, output tensor 1.
LoweredProgram one_op(KernelId kernel, std::vector<uint8_t> params, format::DType in_type, int32_t in_elements,
                      format::DType out_type, int32_t out_elements) {
  LoweredProgram p;
  ProgramTensor in, out;
  in.dtype = in_type;
  in.dims = {in_elements};
  out.dtype = out_type;
  out.dims = {out_elements};
  p.add_tensor(in);
  p.add_tensor(out);
  ProgramOp op;
  op.kernel = kernel;
  op.inputs = {0};
  op.outputs = {1};
  op.params = std::move(params);
  p.ops.push_back(op);
  return p;
}

// Runs `kernel(input, output)` once on separate buffers and once in one buffer with the output
// `shift` bytes below the input (negative: above): whether both produce the same output bytes.
template <typename Run>
bool same_in_place(const std::vector<uint8_t>& input, size_t out_bytes, int64_t shift, Run kernel) {
  std::vector<uint8_t> apart(out_bytes, 0xEE);
  std::vector<uint8_t> in_copy = input;
  kernel(in_copy.data(), apart.data());
  // Both 16-byte aligned: shifts are multiples of 16.
  const int64_t in_at = std::max<int64_t>(shift, 0), out_at = std::max<int64_t>(-shift, 0);
  tp::AlignedBytes shared(size_t(std::max(in_at + int64_t(input.size()), out_at + int64_t(out_bytes))) + 16);
  std::memcpy(shared.data() + in_at, input.data(), input.size());
  kernel(shared.data() + in_at, shared.data() + out_at);
  return std::memcmp(apart.data(), shared.data() + out_at, out_bytes) == 0;
}

template <typename Run>
void expect_same_in_place(const std::vector<uint8_t>& input, size_t out_bytes, int64_t shift, Run kernel) {
  EXPECT_TRUE(same_in_place(input, out_bytes, shift, kernel)) << "shift " << shift;
}

std::vector<uint8_t> random_bytes(Rng& rng, size_t n) {
  std::vector<uint8_t> v(n);
  for (auto& b : v) b = uint8_t(rng.uniform_int(0, 255));
  return v;
}

std::vector<uint8_t> random_floats(Rng& rng, size_t n) {
  const std::vector<float> f = rng.floats(n, -2.0, 2.0);
  std::vector<uint8_t> v(n * 4);
  std::memcpy(v.data(), f.data(), v.size());
  return v;
}

// Random window geometry: kernel, stride, padding (possibly large) and dilation.
template <typename P>
void random_window(Rng& rng, P& p, int32_t in_c, int32_t out_c) {
  p.in_h = rng.uniform_int(1, 9);
  p.in_w = rng.uniform_int(1, 9);
  p.k_h = rng.uniform_int(1, std::min(4, p.in_h));
  p.k_w = rng.uniform_int(1, std::min(4, p.in_w));
  p.stride_h = rng.uniform_int(1, 3);
  p.stride_w = rng.uniform_int(1, 3);
  p.pad_top = rng.uniform_int(0, p.k_h - 1);
  p.pad_left = rng.uniform_int(0, p.k_w - 1);
  p.out_h = (p.in_h + 2 * p.pad_top - p.k_h) / p.stride_h + 1;
  p.out_w = (p.in_w + 2 * p.pad_left - p.k_w) / p.stride_w + 1;
  p.in_c = in_c;
  p.out_c = out_c;
}

TEST(PlannerInPlace, ConvAndDepthwiseAtTheirShift) {
  int tight = 0, tight_above = 0;  // cases where 16 bytes less shift corrupts the output: no slack
  for (uint32_t seed = 1; seed <= 150; ++seed) {
    SCOPED_TRACE(::testing::Message() << "seed " << seed);
    Rng rng(seed);
    const bool depthwise = rng.coin();
    const bool fp32 = rng.coin(0.25);
    const int32_t in_c = rng.uniform_int(1, 6);
    const int32_t out_c = depthwise ? in_c * rng.uniform_int(1, 2) : rng.uniform_int(1, 8);
    k::ConvParams cp{};
    random_window(rng, cp, in_c, out_c);
    cp.dil_h = rng.coin(0.2) ? 2 : 1;
    cp.dil_w = 1;
    cp.out_h = (cp.in_h + 2 * cp.pad_top - cp.dil_h * (cp.k_h - 1) - 1) / cp.stride_h + 1;
    if (cp.out_h < 1) continue;
    cp.input_offset = rng.uniform_int(-20, 20);
    cp.out.output_offset = rng.uniform_int(-20, 20);
    cp.out.act_min = -128;
    cp.out.act_max = 127;
    cp.act_min_f = -1e30f;
    cp.act_max_f = 1e30f;
    k::DwConvParams dp{};
    dp.in_h = cp.in_h; dp.in_w = cp.in_w; dp.in_c = cp.in_c; dp.out_h = cp.out_h; dp.out_w = cp.out_w; dp.out_c = cp.out_c;
    dp.ch_mult = depthwise ? out_c / in_c : 1;
    dp.k_h = cp.k_h; dp.k_w = cp.k_w; dp.stride_h = cp.stride_h; dp.stride_w = cp.stride_w;
    dp.pad_top = cp.pad_top; dp.pad_left = cp.pad_left; dp.dil_h = cp.dil_h; dp.dil_w = cp.dil_w;
    dp.input_offset = cp.input_offset; dp.out.output_offset = cp.out.output_offset;
    dp.out.act_min = -128; dp.out.act_max = 127; dp.act_min_f = -1e30f; dp.act_max_f = 1e30f;
    const int32_t in_n = cp.in_h * cp.in_w * in_c, out_n = cp.out_h * cp.out_w * out_c;
    const auto dtype = fp32 ? format::DType::kFloat32 : format::DType::kInt8;
    const KernelId id = depthwise ? (fp32 ? KernelId::dwconv_f32 : KernelId::dwconv_s8)
                                  : (fp32 ? KernelId::conv_f32 : KernelId::conv_s8);
    const LoweredProgram p = one_op(id, depthwise ? bytes_of(dp) : bytes_of(cp), dtype, in_n, dtype, out_n);
    const int64_t shift = in_place_shift(p, p.ops[0], 0);
    const size_t weights_n = size_t(depthwise ? cp.k_h * cp.k_w * out_c : out_c * cp.k_h * cp.k_w * in_c);
    const std::vector<int8_t> w8 = [&] {
      std::vector<int8_t> w(weights_n);
      for (auto& v : w) v = int8_t(rng.uniform_int(-127, 127));
      return w;
    }();
    const std::vector<float> wf = rng.floats(weights_n, -1, 1), bf = rng.floats(size_t(out_c), -1, 1);
    std::vector<int32_t> bias(static_cast<size_t>(out_c)), mult(bias), shifts(bias);
    for (int32_t c = 0; c < out_c; ++c) {
      bias[size_t(c)] = rng.uniform_int(-1000, 1000);
      mult[size_t(c)] = rng.uniform_int(1 << 30, 0x7FFFFFFF);
      shifts[size_t(c)] = rng.uniform_int(-10, -4);
    }
    const auto input = fp32 ? random_floats(rng, size_t(in_n)) : random_bytes(rng, size_t(in_n));
    const size_t out_bytes = size_t(out_n) * (fp32 ? 4 : 1);
    auto run = [&](uint8_t* in, uint8_t* out) {
      if (fp32 && depthwise)
        k::dwconv_f32(dp, reinterpret_cast<float*>(in), wf.data(), bf.data(), reinterpret_cast<float*>(out));
      else if (fp32)
        k::conv_f32(cp, reinterpret_cast<float*>(in), wf.data(), bf.data(), reinterpret_cast<float*>(out));
      else if (depthwise)
        k::dwconv_s8(dp, reinterpret_cast<int8_t*>(in), w8.data(), bias.data(), mult.data(), shifts.data(),
                     reinterpret_cast<int8_t*>(out));
      else
        k::conv_s8(cp, reinterpret_cast<int8_t*>(in), w8.data(), bias.data(), mult.data(), shifts.data(),
                   reinterpret_cast<int8_t*>(out));
    };
    expect_same_in_place(input, out_bytes, shift, run);
    if (shift >= 16) tight += !same_in_place(input, out_bytes, shift - 16, run);
    // The int8 kernels walk backwards when their output starts above the input.
    const int64_t above = in_place_shift_above(p, p.ops[0], 0);
    EXPECT_EQ(above >= 0, !fp32);
    if (above >= 0) {
      expect_same_in_place(input, out_bytes, -above, run);
      if (above >= 16) tight_above += !same_in_place(input, out_bytes, 16 - above, run);
    }
    if (::testing::Test::HasFailure()) return;
  }
  EXPECT_GT(tight, 20);
  EXPECT_GT(tight_above, 20);
}

TEST(PlannerInPlace, PoolingAtItsShift) {
  for (uint32_t seed = 1; seed <= 100; ++seed) {
    SCOPED_TRACE(::testing::Message() << "seed " << seed);
    Rng rng(100 + seed);
    k::ConvParams geometry{};
    const int32_t c = rng.uniform_int(1, 5);
    random_window(rng, geometry, c, c);
    k::PoolParams pp{};
    pp.in_h = geometry.in_h; pp.in_w = geometry.in_w; pp.c = c; pp.out_h = geometry.out_h; pp.out_w = geometry.out_w;
    pp.k_h = geometry.k_h; pp.k_w = geometry.k_w; pp.stride_h = geometry.stride_h; pp.stride_w = geometry.stride_w;
    pp.pad_top = geometry.pad_top; pp.pad_left = geometry.pad_left;
    pp.act_min = -128; pp.act_max = 127; pp.act_min_f = -1e30f; pp.act_max_f = 1e30f;
    const bool is_max = rng.coin();
    const int32_t in_n = pp.in_h * pp.in_w * c, out_n = pp.out_h * pp.out_w * c;
    const LoweredProgram p = one_op(is_max ? KernelId::maxpool_s8 : KernelId::avgpool_s8, bytes_of(pp),
                                    format::DType::kInt8, in_n, format::DType::kInt8, out_n);
    expect_same_in_place(random_bytes(rng, size_t(in_n)), size_t(out_n), in_place_shift(p, p.ops[0], 0),
                         [&](uint8_t* in, uint8_t* out) {
                           if (is_max) k::maxpool_s8(pp, reinterpret_cast<int8_t*>(in), reinterpret_cast<int8_t*>(out));
                           else k::avgpool_s8(pp, reinterpret_cast<int8_t*>(in), reinterpret_cast<int8_t*>(out));
                         });
    if (::testing::Test::HasFailure()) return;
  }
}

TEST(PlannerInPlace, ElementwiseAtTheirShift) {
  Rng rng(5);
  const int32_t n = 203;
  k::QuantizeParams qp{n, 0.02f, -3};
  const LoweredProgram quant = one_op(KernelId::quantize_f32_s8, bytes_of(qp), format::DType::kFloat32, n,
                                      format::DType::kInt8, n);
  EXPECT_EQ(in_place_shift(quant, quant.ops[0], 0), 0) << "int8 output may start where the float input does";
  expect_same_in_place(random_floats(rng, size_t(n)), size_t(n), 0, [&](uint8_t* in, uint8_t* out) {
    k::quantize_f32_s8(qp, reinterpret_cast<float*>(in), reinterpret_cast<int8_t*>(out));
  });
  const LoweredProgram dequant = one_op(KernelId::dequantize_s8_f32, bytes_of(qp), format::DType::kInt8, n,
                                        format::DType::kFloat32, n);
  const int64_t dq_shift = in_place_shift(dequant, dequant.ops[0], 0);
  EXPECT_GE(dq_shift, 3 * n);
  expect_same_in_place(random_bytes(rng, size_t(n)), size_t(n) * 4, dq_shift, [&](uint8_t* in, uint8_t* out) {
    k::dequantize_s8_f32(qp, reinterpret_cast<int8_t*>(in), reinterpret_cast<float*>(out));
  });
  k::RequantizeParams rq{n, 5, -7, 1518500250, -1, -100, 100};
  const LoweredProgram req = one_op(KernelId::requantize_s8, bytes_of(rq), format::DType::kInt8, n, format::DType::kInt8, n);
  EXPECT_EQ(in_place_shift(req, req.ops[0], 0), 0);
  expect_same_in_place(random_bytes(rng, size_t(n)), size_t(n), 0, [&](uint8_t* in, uint8_t* out) {
    k::requantize_s8(rq, reinterpret_cast<int8_t*>(in), reinterpret_cast<int8_t*>(out));
  });
  // add: output over either same-shape operand; the other operand stays where it is.
  k::BinaryParams bp{};
  bp.outer = 7; bp.inner = 29; bp.in2_mode = 0;
  bp.input1_offset = 3; bp.input2_offset = -5; bp.output_offset = 1; bp.left_shift = 20;
  bp.input1_multiplier = 1 << 30; bp.input1_shift = 0; bp.input2_multiplier = 1 << 30; bp.input2_shift = 0;
  bp.output_multiplier = 1 << 30; bp.output_shift = -19; bp.act_min = -128; bp.act_max = 127;
  const auto other = random_bytes(rng, size_t(n));
  for (int slot = 0; slot < 2; ++slot) {
    expect_same_in_place(random_bytes(rng, size_t(n)), size_t(n), 0, [&](uint8_t* in, uint8_t* out) {
      const auto* a = reinterpret_cast<const int8_t*>(slot == 0 ? in : other.data());
      const auto* b = reinterpret_cast<const int8_t*>(slot == 0 ? other.data() : in);
      k::add_s8(bp, a, b, reinterpret_cast<int8_t*>(out));
    });
  }
  // Kernels that cannot: a broadcast operand is read again for every row; softmax re-reads rows.
  bp.in2_mode = 1;
  LoweredProgram add = one_op(KernelId::add_s8, bytes_of(bp), format::DType::kInt8, n, format::DType::kInt8, n);
  ProgramTensor row;
  row.dims = {29};
  add.ops[0].inputs.push_back(add.add_tensor(row));
  EXPECT_EQ(in_place_shift(add, add.ops[0], 0), 0);
  EXPECT_EQ(in_place_shift(add, add.ops[0], 1), -1);
  k::SoftmaxParams sp{1, n, 1 << 30, 1, -100};
  const LoweredProgram sm = one_op(KernelId::softmax_s8, bytes_of(sp), format::DType::kInt8, n, format::DType::kInt8, n);
  EXPECT_EQ(in_place_shift(sm, sm.ops[0], 0), -1);
}

// A DS-CNN-like chain (conv, then depthwise and pointwise blocks at one resolution): without
// in-place execution two 25x5x64 maps are live at every op; with it each op writes just below
// its input, and the outputs do not change.
Graph ds_chain(uint32_t seed) {
  Rng rng(seed);
  tp::Builder b;
  const int x = b.input("x", {1, 1, 49, 10});
  int y = b.relu(b.op("conv2d", {x, b.random_constant("c1", {64, 1, 10, 4}, rng, -0.3, 0.3), b.random_constant("b1", {64}, rng)},
                      {{"stride", std::vector<int64_t>{2, 2}}, {"padding", std::vector<int64_t>{5, 1}},
                       {"dilation", std::vector<int64_t>{1, 1}}, {"groups", int64_t(1)}}));
  for (int i = 0; i < 2; ++i) {
    y = b.relu(b.conv(y, b.random_constant("dw" + std::to_string(i), {64, 1, 3, 3}, rng, -0.5, 0.5), -1, 1, 1, 64));
    y = b.relu(b.conv(y, b.random_constant("pw" + std::to_string(i), {64, 64, 1, 1}, rng, -0.2, 0.2), -1));
  }
  b.outputs({b.linear(b.mean_hw(y, false), b.random_constant("fc", {12, 64}, rng, -0.3, 0.3), -1)});
  return b.g;
}

std::vector<uint8_t> compile(const Graph& g, bool int8, bool in_place, bool schedule, uint32_t seed) {
  CompileOptions o;
  o.target = "cortex-m0";  // reference and scalar kernels: every window op may run in place
  o.precision = int8 ? Precision::kInt8 : Precision::kFloat32;
  o.in_place = in_place;
  o.schedule = schedule;
  return compile_graph(g, o, int8 ? tp::random_calibration(g, 4, seed) : Calibration{});
}

TEST(PlannerInPlace, DsCnnChainShrinksAndStaysBitExact) {
  const Graph g = ds_chain(3);
  const auto plain = compile(g, true, false, true, 3), in_place = compile(g, true, true, true, 3);
  tp::Runner a(plain), b(in_place);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_GE(a.program().arena_lower_bound(), 2u * 8000u);
  EXPECT_LT(b.program().arena_bytes(), 2u * 8000u) << "in place, the chain fits where two maps do not";
  // Depthwise and pointwise steps alternate between writing below and above their input, so the
  // chain stays within one step's lead of the bound instead of drifting down block by block.
  EXPECT_LE(b.program().arena_bytes(), b.program().arena_lower_bound() + 448);
  for (uint32_t s = 1; s <= 3; ++s) EXPECT_EQ(run_program(plain, s), run_program(in_place, s));
}

// Random graphs (branches, cat, add of two live activations, views), int8 and fp32: the
// outputs are the same bytes with in-place execution and scheduling on or off.
TEST(PlannerInPlace, RandomGraphsAreBitExactWithAndWithoutInPlace) {
  int ran_in_place = 0;
  for (uint32_t seed = 1; seed <= 40; ++seed) {
    SCOPED_TRACE(::testing::Message() << "seed " << seed);
    const Graph g = tp::random_graph(seed, 14);
    for (bool int8 : {false, true}) {
      const auto base = run_program(compile(g, int8, false, false, seed), seed);
      const auto bytes = compile(g, int8, true, true, seed);
      ran_in_place += std::string(bytes.begin(), bytes.end()).find("\"in_place_of\"") != std::string::npos;
      EXPECT_EQ(base, run_program(bytes, seed)) << (int8 ? "int8" : "fp32");
    }
    if (::testing::Test::HasFailure()) return;
  }
  EXPECT_GT(ran_in_place, 20);
}

}  // namespace
}  // namespace mcuflow::compiler
