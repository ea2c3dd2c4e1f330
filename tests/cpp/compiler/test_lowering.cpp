// Lowering (compiler/src/lower.cpp) and the whole compile pipeline: weight layouts, int8
// parameters derived independently from the float model, lowering errors, float32 programs
// against the double-precision reference interpreter, and int8 host outputs against float32 host
// outputs.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "../test_programs.h"
#include "mcuflow/compiler/lower.h"
#include "mcuflow/compiler/passes.h"
#include "mcuflow/compiler/quantizer.h"
#include "mcuflow/kernels/params.h"

namespace mcuflow::compiler {
namespace {

using tp::Builder;
using tp::Rng;

template <typename F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const CompileError& e) {
    return e.what();
  }
  return "";
}

template <typename T>
std::vector<T> values_of(const ProgramTensor& t) {
  std::vector<T> v(t.bytes.size() / sizeof(T));
  std::memcpy(v.data(), t.bytes.data(), t.bytes.size());
  return v;
}

template <typename P>
P params_of_op(const ProgramOp& op) {
  P p;
  EXPECT_EQ(op.params.size(), sizeof(P));
  std::memcpy(&p, op.params.data(), sizeof(P));
  return p;
}

const ProgramOp* find(const LoweredProgram& p, KernelId k) {
  for (const ProgramOp& op : p.ops) {
    if (op.kernel == k) return &op;
  }
  return nullptr;
}

// The graph after the pipeline's passes, calibrated and quantized (int8) or not.
Graph prepared(Graph g, bool int8, uint32_t seed = 1) {
  run_graph_passes(g);
  if (int8) {
    calibrate(g, tp::random_calibration(g, 16, seed));
    assign_quantization(g);
  }
  return g;
}

struct ConvModel {
  Graph g;
  int w, b;
};

ConvModel conv_model(int64_t groups, bool relu) {
  Rng rng(31);
  Builder b;
  ConvModel m;
  const int64_t cin = 4, cout = groups == 1 ? 6 : 8, kh = 3, kw = 2;
  const int x = b.input("x", {1, cin, 7, 5});
  m.w = b.random_constant("conv.weight", {cout, cin / groups, kh, kw}, rng, -0.8, 0.8);
  m.b = b.random_constant("conv.bias", {cout}, rng, -0.3, 0.3);
  int y = b.conv(x, m.w, m.b, 1, 1, groups);
  if (relu) y = b.relu(y);
  b.outputs({y});
  m.g = b.g;
  return m;
}

// ---------------------------------------------------------------------------------------------
// Weight layouts

TEST(Lowering, ConvWeightsAreOhwi) {
  const ConvModel m = conv_model(1, false);
  const LoweredProgram p = lower(prepared(m.g, false), LowerOptions{Precision::kFloat32, false});
  const ProgramOp* op = find(p, KernelId::conv_f32);
  ASSERT_NE(op, nullptr);
  const ProgramTensor& w = p.tensors[size_t(op->inputs[1])];
  ASSERT_EQ(w.dims, (std::vector<int32_t>{6, 3, 2, 4}));
  const auto v = values_of<float>(w);
  const auto& src = m.g.tensors[size_t(m.w)].data;  // OIHW [6][4][3][2]
  for (int o = 0; o < 6; ++o)
    for (int i = 0; i < 4; ++i)
      for (int y = 0; y < 3; ++y)
        for (int x = 0; x < 2; ++x) ASSERT_EQ(v[size_t(((o * 3 + y) * 2 + x) * 4 + i)], src[size_t(((o * 4 + i) * 3 + y) * 2 + x)]);
  const auto params = params_of_op<kernels::ConvParams>(*op);
  EXPECT_EQ(params.in_h, 7);
  EXPECT_EQ(params.in_w, 5);
  EXPECT_EQ(params.in_c, 4);
  EXPECT_EQ(params.out_c, 6);
  EXPECT_EQ(params.k_h, 3);
  EXPECT_EQ(params.k_w, 2);
  EXPECT_EQ(params.pad_top, 1);
  EXPECT_EQ(p.tensors[size_t(op->inputs[0])].dims, (std::vector<int32_t>{1, 7, 5, 4})) << "NHWC activations";
  EXPECT_EQ(p.tensors[size_t(op->inputs[0])].layout, format::Layout::kNhwc);
}

TEST(Lowering, DepthwiseWeightsAreHwo) {
  const ConvModel m = conv_model(4, false);  // channel multiplier 2
  const LoweredProgram p = lower(prepared(m.g, false), LowerOptions{Precision::kFloat32, false});
  const ProgramOp* op = find(p, KernelId::dwconv_f32);
  ASSERT_NE(op, nullptr);
  const ProgramTensor& w = p.tensors[size_t(op->inputs[1])];
  ASSERT_EQ(w.dims, (std::vector<int32_t>{3, 2, 8}));
  const auto v = values_of<float>(w);
  const auto& src = m.g.tensors[size_t(m.w)].data;  // [8][1][3][2]
  for (int o = 0; o < 8; ++o)
    for (int y = 0; y < 3; ++y)
      for (int x = 0; x < 2; ++x) ASSERT_EQ(v[size_t((y * 2 + x) * 8 + o)], src[size_t((o * 3 + y) * 2 + x)]);
  EXPECT_EQ(params_of_op<kernels::DwConvParams>(*op).ch_mult, 2);
}

// ---------------------------------------------------------------------------------------------
// int8 parameters, recomputed from the float model and the assigned quantization

void check_int8_conv(bool depthwise) {
  const ConvModel m = conv_model(depthwise ? 4 : 1, true);
  const Graph g = prepared(m.g, true);
  const LoweredProgram p = lower(g, LowerOptions{Precision::kInt8, false});
  const ProgramOp* op = find(p, depthwise ? KernelId::dwconv_s8 : KernelId::conv_s8);
  ASSERT_NE(op, nullptr);
  ASSERT_EQ(op->inputs.size(), 5u);
  const ProgramTensor& x = p.tensors[size_t(op->inputs[0])];
  const ProgramTensor& y = p.tensors[size_t(op->outputs[0])];
  const auto wq = values_of<int8_t>(p.tensors[size_t(op->inputs[1])]);
  const auto bias = values_of<int32_t>(p.tensors[size_t(op->inputs[2])]);
  const auto mult = values_of<int32_t>(p.tensors[size_t(op->inputs[3])]);
  const auto shift = values_of<int32_t>(p.tensors[size_t(op->inputs[4])]);
  const auto& w = m.g.tensors[size_t(m.w)].data;
  const auto& b = m.g.tensors[size_t(m.b)].data;
  const int cout = depthwise ? 8 : 6, per = int(w.size()) / cout;
  ASSERT_EQ(mult.size(), size_t(cout));
  // The activation quantization is what the quantizer assigned from calibration.
  const Tensor& gx = g.tensors[size_t(g.ops[0].inputs[0])];
  const Tensor& gy = g.tensors[size_t(g.ops[0].outputs[0])];
  EXPECT_EQ(x.scale, gx.quant.scale);
  EXPECT_EQ(y.scale, gy.quant.scale);
  EXPECT_EQ(y.zero_point, gy.quant.zero_point);
  for (int c = 0; c < cout; ++c) {
    double max_abs = 0;
    for (int k = 0; k < per; ++k) max_abs = std::max(max_abs, std::fabs(double(w[size_t(c * per + k)])));
    const double ws = max_abs / 127.0;
    // Weights: symmetric, per output channel, the largest magnitude at +-127.
    int max_q = 0;
    for (int k = 0; k < per; ++k) {
      // Find this weight in the device layout.
      int idx;
      if (depthwise) {
        idx = k * cout + c;  // [kh][kw][o] with per = kh*kw
      } else {
        const int i = k / 6, yx = k % 6;  // OIHW inner index k = (i*3 + y)*2 + x
        idx = (c * 6 + yx) * 4 + i;
      }
      const int q = wq[size_t(idx)];
      max_q = std::max(max_q, std::abs(q));
      EXPECT_LE(std::fabs(q * ws - w[size_t(c * per + k)]), 0.5 * ws * (1 + 1e-5)) << c << " " << k;
    }
    EXPECT_EQ(max_q, 127) << c;
    // Bias in int32 at scale in_scale * w_scale[c].
    EXPECT_NEAR(bias[size_t(c)], b[size_t(c)] / (double(x.scale) * ws), 0.5 + 1e-3 * std::fabs(bias[size_t(c)])) << c;
    // Requantization: multiplier * 2^(shift-31) == in_scale * w_scale / out_scale.
    const double real = double(x.scale) * ws / y.scale;
    const double got = std::ldexp(double(mult[size_t(c)]), shift[size_t(c)] - 31);
    EXPECT_NEAR(got / real, 1.0, 1e-6) << c;
    EXPECT_GE(mult[size_t(c)], 1 << 30);
  }
  auto check_params = [&](const auto& params) {
    EXPECT_EQ(params.input_offset, -x.zero_point);
    EXPECT_EQ(params.out.output_offset, y.zero_point);
    // The fused relu: real 0 in the output's integers, unbounded above.
    EXPECT_EQ(params.out.act_min, std::max(-128, int(std::lround(0.0 / y.scale)) + y.zero_point));
    EXPECT_EQ(params.out.act_max, 127);
  };
  if (depthwise) {
    check_params(params_of_op<kernels::DwConvParams>(*op));
  } else {
    check_params(params_of_op<kernels::ConvParams>(*op));
  }
}

TEST(Lowering, Int8ConvParameters) { check_int8_conv(false); }
TEST(Lowering, Int8DepthwiseParameters) { check_int8_conv(true); }

TEST(Lowering, Int8LinearIsPerTensor) {
  const Graph g = prepared(tp::tiny_graph(), true);
  const LoweredProgram p = lower(g, LowerOptions{Precision::kInt8, false});
  const ProgramOp* op = find(p, KernelId::fc_s8);
  ASSERT_NE(op, nullptr);
  const auto params = params_of_op<kernels::FcParams>(*op);
  EXPECT_EQ(params.per_channel, 0);
  EXPECT_EQ(params.rows, 1);
  EXPECT_EQ(params.in_c, 8);
  EXPECT_EQ(params.out_c, 4);
  EXPECT_EQ(p.tensors[size_t(op->inputs[3])].bytes.size(), 4u);
  const auto wq = values_of<int8_t>(p.tensors[size_t(op->inputs[1])]);
  int max_q = 0;
  for (int8_t q : wq) max_q = std::max(max_q, std::abs(int(q)));
  EXPECT_EQ(max_q, 127);
  // Float I/O around the int8 body: quantize the input, dequantize the output.
  ASSERT_EQ(p.ops.size(), 3u);
  EXPECT_EQ(p.ops.front().kernel, KernelId::quantize_f32_s8);
  EXPECT_EQ(p.ops.back().kernel, KernelId::dequantize_s8_f32);
  EXPECT_EQ(p.tensors[size_t(p.inputs[0])].dtype, format::DType::kFloat32);
  EXPECT_EQ(p.tensors[size_t(p.outputs[0])].dtype, format::DType::kFloat32);
  // int8 I/O: no conversion ops.
  const LoweredProgram q = lower(g, LowerOptions{Precision::kInt8, true});
  ASSERT_EQ(q.ops.size(), 1u);
  EXPECT_EQ(q.tensors[size_t(q.inputs[0])].dtype, format::DType::kInt8);
  EXPECT_TRUE(q.flags & format::kFlagInt8Io);
}

// ---------------------------------------------------------------------------------------------
// Errors

TEST(Lowering, Errors) {
  Rng rng(32);
  {  // batch size != 1 for a conv
    Builder b;
    const int x = b.input("x", {2, 3, 4, 4});
    b.outputs({b.op("conv2d", {x, b.random_constant("w", {2, 3, 1, 1}, rng)},
                    {{"stride", std::vector<int64_t>{1, 1}},
                     {"padding", std::vector<int64_t>{0, 0}},
                     {"dilation", std::vector<int64_t>{1, 1}},
                     {"groups", int64_t(1)}},
                    "net.py:5: self.c(x)")});
    const std::string msg = error_of([&] { tp::compile_fp32(b.g); });
    EXPECT_EQ(msg.rfind("conv2d at net.py:5: self.c(x): batch size 2", 0), 0u) << msg;
  }
  {  // a constant broadcast over a non-channel dim: expanded at compile time, computed right
    Builder b;
    const int x = b.input("x", {1, 3, 4, 4});
    b.outputs({b.op("add", {x, b.random_constant("c", {1, 1, 4, 4}, rng)}, {}, "net.py:6: x + c")});
    tp::Runner r(tp::compile_fp32(b.g));
    ASSERT_TRUE(r.ok());
    Rng in_rng(4);
    const auto in = tp::random_inputs(b.g, in_rng);
    r.set_input(0, in[0]);
    ASSERT_EQ(r.run(), Error::kOk);
    EXPECT_LE(tp::max_abs_diff(r.output(0), tp::reference_eval(b.g, in)[size_t(b.g.outputs[0])]), 1e-6);
  }
  {  // both operands broadcast: supported, and computed right
    Builder b;
    const int x = b.input("x", {4, 1});
    const int y = b.input("y", {1, 3});
    b.outputs({b.op("mul", {x, y})});
    const auto bytes = tp::compile_fp32(b.g);
    tp::Runner r(bytes);
    ASSERT_TRUE(r.ok());
    Rng in_rng(3);
    const auto in = tp::random_inputs(b.g, in_rng);
    r.set_input(0, in[0]);
    r.set_input(1, in[1]);
    ASSERT_EQ(r.run(), Error::kOk);
    EXPECT_LE(tp::max_abs_diff(r.output(0), tp::reference_eval(b.g, in)[size_t(b.g.outputs[0])]), 1e-6);
  }
  {  // a constant model output
    Builder b;
    const int x = b.input("x", {1, 3});
    const int c = b.op("add", {b.constant("a", {3}, {1, 2, 3}), b.constant("b", {3}, {1, 1, 1})});
    b.outputs({b.relu(x), c});
    EXPECT_NE(error_of([&] { tp::compile_fp32(b.g); }).find("is a constant"), std::string::npos);
  }
  {  // pipeline-level errors
    Builder b;
    b.input("x", {1, 3});
    EXPECT_NE(error_of([&] { tp::compile_fp32(b.g); }).find("no outputs"), std::string::npos);
    Graph none;
    EXPECT_NE(error_of([&] { tp::compile_fp32(none); }).find("no tensor inputs"), std::string::npos);
    CompileOptions o;
    o.target = "cortex-a53";
    const std::string msg = error_of([&] { compile_graph(tp::tiny_graph(), o, {}); });
    EXPECT_NE(msg.find("unknown target 'cortex-a53'"), std::string::npos) << msg;
    EXPECT_NE(msg.find("cortex-m55"), std::string::npos) << msg;
    EXPECT_NE(msg.find("cortex-m0plus"), std::string::npos) << msg;
    EXPECT_NE(error_of([&] { tp::compile_int8(tp::tiny_graph(), 1, 0); }).find("calibration data is empty"),
              std::string::npos);
  }
}

TEST(Lowering, Targets) {
  EXPECT_EQ(find_target("cortex-m0").tier(), "scalar");
  EXPECT_EQ(find_target("cortex-m23").tier(), "scalar");
  EXPECT_EQ(find_target("cortex-m4").tier(), "dsp");
  EXPECT_EQ(find_target("cortex-m33").tier(), "dsp");
  EXPECT_EQ(find_target("cortex-m55").tier(), "mve");
  EXPECT_EQ(find_target("cortex-m85").tier(), "mve");
  // Every target compiles the same model to a program the host runs with the same results.
  const Graph g = tp::conv_relu_pool_linear_graph();
  const std::vector<float> in = Rng(5).floats(192, -1, 1);
  std::vector<float> first;
  for (const char* t : {"cortex-m0", "cortex-m3", "cortex-m4", "cortex-m7", "cortex-m33", "cortex-m55", "cortex-m85"}) {
    CompileOptions o;
    o.target = t;
    const auto out = tp::run_once(compile_graph(g, o, tp::random_calibration(g, 8, 1)), in);
    ASSERT_EQ(out.size(), 5u) << t;
    if (first.empty()) first = out;
    EXPECT_EQ(out, first) << t;
  }
}

// ---------------------------------------------------------------------------------------------
// float32 programs compute what the model computes

TEST(Lowering, Fp32ProgramsMatchTheReferenceInterpreter) {
  for (const Graph& g : {tp::tiny_graph(), tp::conv_relu_pool_linear_graph(), tp::mixed_graph()}) {
    const auto bytes = tp::compile_fp32(g);
    Rng rng(40);
    for (int trial = 0; trial < 3; ++trial) {
      const auto in = tp::random_inputs(g, rng);
      const tp::Values ref = tp::reference_eval(g, in);
      tp::Runner r(bytes);
      ASSERT_TRUE(r.ok());
      r.set_input(0, in[0]);
      ASSERT_EQ(r.run(), Error::kOk);
      for (uint32_t o = 0; o < r.program().output_count(); ++o) {
        EXPECT_LE(tp::max_abs_diff(r.output(o), ref[size_t(g.outputs[o])]), 1e-4) << "output " << o;
      }
    }
  }
}

TEST(Lowering, Fp32RandomGraphsMatchTheReferenceInterpreter) {
  int outputs_checked = 0;
  for (uint32_t seed = 1; seed <= 60; ++seed) {
    SCOPED_TRACE(::testing::Message() << "random graph " << seed);
    const Graph g = tp::random_graph(seed, 12);
    std::vector<uint8_t> bytes;
    ASSERT_NO_THROW(bytes = tp::compile_fp32(g));
    tp::Runner r(bytes);
    ASSERT_TRUE(r.ok()) << error_name(r.error());
    Rng rng(seed);
    const auto in = tp::random_inputs(g, rng);
    for (uint32_t i = 0; i < r.program().input_count(); ++i) r.set_input(i, in[i]);
    ASSERT_EQ(r.run(), Error::kOk);
    const tp::Values ref = tp::reference_eval(g, in);
    for (uint32_t o = 0; o < r.program().output_count(); ++o) {
      const auto& expected = ref[size_t(g.outputs[o])];
      double scale = 1;
      for (double e : expected) scale = std::max(scale, std::fabs(e));
      EXPECT_LE(tp::max_abs_diff(r.output(o), expected), 1e-5 * scale) << "output " << o;
      ++outputs_checked;
    }
  }
  EXPECT_GE(outputs_checked, 60);
}

// ---------------------------------------------------------------------------------------------
// int8 against float32

// The int8 tensor a float output is dequantized from (scale = one quantization step).
format::TensorRecord int8_output(const std::vector<uint8_t>& bytes, uint32_t o) {
  tp::AlignedBytes f(bytes);
  const uint16_t out = tp::io_table(f.data())[tp::header(f.data()).input_count + o];
  for (uint32_t i = 0; i < tp::header(f.data()).op_count; ++i) {
    const format::OpRecord& op = tp::op_record(f.data(), i);
    if (op.kernel == uint16_t(KernelId::dequantize_s8_f32) && op.tensors[op.input_count] == out)
      return tp::tensor_record(f.data(), op.tensors[0]);
  }
  return format::TensorRecord{};
}

// int8 host outputs lie within a few quantization steps of float32 host outputs clamped to what
// the int8 output can represent (evaluation data beyond the calibrated range is clipped: that is
// the quantization, not an error). Calibration and evaluation data are separate samples of the
// same distribution.
TEST(Lowering, Int8MatchesFp32ConvReluPoolLinear) {
  const Graph g = tp::conv_relu_pool_linear_graph();
  const auto int8 = tp::compile_int8(g, /*seed=*/100, /*samples=*/64);
  const auto fp32 = tp::compile_fp32(g);
  const format::TensorRecord q = int8_output(int8, 0);
  const double step = q.scale;
  ASSERT_GT(step, 0.0);
  const double lo = (-128 - q.zero_point) * step, hi = (127 - q.zero_point) * step;
  Rng rng(101);
  double worst = 0, sum = 0;
  int n = 0, clipped = 0, top1_agree = 0;
  const int trials = 200;
  for (int trial = 0; trial < trials; ++trial) {
    const auto in = rng.floats(192, -1, 1);
    const auto a = tp::run_once(int8, in), b = tp::run_once(fp32, in);
    ASSERT_EQ(a.size(), 5u);
    ASSERT_EQ(b.size(), 5u);
    for (size_t i = 0; i < a.size(); ++i) {
      clipped += b[i] < lo || b[i] > hi;
      const double d = std::fabs(double(a[i]) - std::clamp(double(b[i]), lo, hi)) / step;
      worst = std::max(worst, d);
      sum += d;
      ++n;
    }
    top1_agree += std::max_element(a.begin(), a.end()) - a.begin() == std::max_element(b.begin(), b.end()) - b.begin();
  }
  std::printf("int8 vs fp32: step %g, worst %.2f steps, mean %.3f steps, %d of %d outputs clipped, top-1 agreement %d/%d\n",
              step, worst, sum / n, clipped, n, top1_agree, trials);
  EXPECT_LE(worst, 4.0) << "int8 host output is more than 4 quantization steps from fp32";
  EXPECT_LE(sum / n, 1.0);
  EXPECT_GE(top1_agree, trials * 9 / 10);
}

TEST(Lowering, Int8IoProgramComputesTheSameIntegers) {
  const Graph g = tp::conv_relu_pool_linear_graph();
  const auto float_io = tp::compile_int8(g, 7, 16, false);
  const auto int8_io = tp::compile_int8(g, 7, 16, true);
  tp::Runner f(float_io), q(int8_io);
  ASSERT_TRUE(f.ok());
  ASSERT_TRUE(q.ok());
  EXPECT_TRUE(q.program().flags() & format::kFlagInt8Io);
  const TensorInfo qin = q.program().input(0), qout = q.program().output(0);
  ASSERT_EQ(qin.dtype, format::DType::kInt8);
  ASSERT_EQ(qout.dtype, format::DType::kInt8);
  Rng rng(8);
  for (int trial = 0; trial < 10; ++trial) {
    const auto in = rng.floats(192, -1, 1);
    f.set_input(0, in);
    ASSERT_EQ(f.run(), Error::kOk);
    // Quantize the input as the float-I/O program's quantize op does, in NHWC order.
    const auto phys = logical_to_physical(reinterpret_cast<const uint8_t*>(in.data()), {1, 3, 8, 8}, qin.layout, 4);
    std::vector<uint8_t> qbytes(192);
    for (size_t i = 0; i < 192; ++i) {
      float v;
      std::memcpy(&v, &phys[i * 4], 4);
      const float r = std::round(v / qin.scale) + float(qin.zero_point);
      qbytes[i] = uint8_t(int8_t(std::clamp(r, -128.0f, 127.0f)));
    }
    q.set_input_bytes(0, qbytes);
    ASSERT_EQ(q.run(), Error::kOk);
    const auto out = q.session().output_buffer(0).value();
    const auto expected = f.output(0);
    ASSERT_EQ(out.size, expected.size());
    for (uint32_t i = 0; i < out.size; ++i) {
      EXPECT_EQ(float((int8_t(out.data[i]) - qout.zero_point) * qout.scale), expected[i]) << i;
    }
  }
}

// A degenerate calibrated range (an activation that was always 0) used to get the scale 1e-8; the
// next conv's bias, quantized at 1e-8 * w_scale, then saturated at INT32_MAX and conv_s8's
// `acc += bias` overflowed at inference (fixed in 5624a5c: unit scale for ranges that never
// moved; biases clamped to what the accumulator can add; the verifier checks that bound).
TEST(Lowering, DegenerateCalibrationRangeKeepsBiasInRange) {
  Builder b;
  const int x = b.input("x", {1, 2, 3, 3});
  const int hidden = b.relu(b.conv(x, b.constant("w1", {2, 2, 1, 1}, {1, -1, 1, -1}), -1));
  const int out = b.conv(hidden, b.constant("w2", {2, 2, 1, 1}, {0.3f, 0.4f, 0.5f, 0.2f}),
                         b.constant("b2", {2}, {0.5f, 0.5f}));
  b.outputs({out});
  std::vector<float> calib(18, -1.0f);  // channel 0 = -1, channel 1 = +1: hidden is always 0
  for (int i = 9; i < 18; ++i) calib[i] = 1.0f;
  for (const char* target : {"cortex-m0", "cortex-m55"}) {
    SCOPED_TRACE(target);
    CompileOptions options;
    options.target = target;
    const auto bytes = compile_graph(b.g, options, {{calib}});
    tp::AlignedBytes f(bytes);
    bool found = false;
    for (uint32_t i = 0; i < tp::header(f.data()).op_count; ++i) {
      const format::OpRecord& op = tp::op_record(f.data(), i);
      if (tp::reference_of(op.kernel) != KernelId::conv_s8) continue;
      const auto& in = tp::tensor_record(f.data(), op.tensors[0]);
      const auto& rec = tp::tensor_record(f.data(), op.tensors[2]);
      const int32_t* bias = reinterpret_cast<const int32_t*>(tp::constant_data(f.data(), op.tensors[2]));
      const int64_t max_acc = int64_t(in.dims[3]) * 255 * 128;  // 1x1 conv: in_c terms
      for (uint32_t c = 0; c < rec.bytes / 4; ++c) EXPECT_LE(std::llabs(int64_t(bias[c])) + max_acc, INT32_MAX) << c;
      EXPECT_GE(in.scale, 1e-6f) << "an input scale that small makes any bias overflow";
      found = true;
    }
    EXPECT_TRUE(found);
    // The int8 program saturates `hidden` at its calibrated range, so the output is the bias
    // (the output's own calibrated range is [0, 0.5]).
    std::vector<float> in(18, 1.0f);
    for (int i = 9; i < 18; ++i) in[i] = -1.0f;
    const auto got = tp::run_once(bytes, in);
    ASSERT_EQ(got.size(), 18u);
    for (float v : got) EXPECT_NEAR(v, 0.5, 0.01);
  }
}

// ---------------------------------------------------------------------------------------------
// Compilation is deterministic

TEST(Lowering, CompileIsDeterministic) {
  const Graph g = tp::mixed_graph();
  EXPECT_EQ(tp::compile_int8(g, 3), tp::compile_int8(g, 3));
  EXPECT_EQ(tp::compile_fp32(g), tp::compile_fp32(g));
  EXPECT_NE(tp::compile_int8(g, 3), tp::compile_int8(g, 4)) << "other calibration data, other program";
}

}  // namespace
}  // namespace mcuflow::compiler
