// Graph passes (compiler/src/passes): each pass alone on hand-built graphs, checked for its
// structural effect and for unchanged results against an independent double-precision
// interpreter of the graph (tp::reference_eval) or a direct computation.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <sstream>

#include "../test_programs.h"
#include "mcuflow/compiler/passes.h"

namespace mcuflow::compiler {
namespace {

using tp::Builder;
using tp::max_abs_diff;
using tp::reference_eval;
using tp::Rng;

std::vector<std::string> kinds(const Graph& g) {
  std::vector<std::string> k;
  for (const Op& op : g.ops) k.push_back(op.kind);
  return k;
}

// The graph's outputs on `inputs`, by the reference interpreter.
std::vector<std::vector<double>> outputs_of(const Graph& g, const std::vector<std::vector<float>>& inputs) {
  const tp::Values v = reference_eval(g, inputs);
  std::vector<std::vector<double>> out;
  for (int t : g.outputs) out.push_back(v[size_t(t)]);
  return out;
}

// `pass` leaves the outputs of `g` unchanged on a few random inputs (within `tol`).
template <typename Pass>
void expect_same_outputs(const Graph& before, Pass pass, double tol, uint32_t seed = 1) {
  Graph after = before;
  pass(after);
  Rng rng(seed);
  for (int trial = 0; trial < 3; ++trial) {
    const auto in = tp::random_inputs(before, rng, -2, 2);
    const auto a = outputs_of(before, in), b = outputs_of(after, in);
    ASSERT_EQ(a.size(), b.size());
    for (size_t o = 0; o < a.size(); ++o) EXPECT_LE(max_abs_diff(a[o], b[o]), tol) << "output " << o;
  }
}

// ---------------------------------------------------------------------------------------------
// remove_identities

TEST(Passes, RemoveIdentities) {
  Builder b;
  const int x = b.input("x", {1, 4});
  const int i1 = b.op("identity", {x});
  const int r = b.relu(i1);
  const int i2 = b.op("identity", {r});
  const int c = b.constant("c", {4}, {1, 2, 3, 4});
  const int ic = b.op("identity", {c});
  const int s = b.op("add", {i2, ic});
  b.outputs({s, b.op("identity", {s})});
  const Graph before = b.g;
  Graph g = b.g;
  remove_identities(g);
  EXPECT_EQ(kinds(g), (std::vector<std::string>{"relu", "add"}));
  EXPECT_EQ(g.ops[0].inputs, std::vector<int>{x});
  EXPECT_EQ(g.ops[1].inputs, (std::vector<int>{r, c}));
  EXPECT_EQ(g.outputs, (std::vector<int>{s, s}));
  expect_same_outputs(before, remove_identities, 0.0);
}

TEST(Passes, RemoveIdentitiesKeepsAnInputToOutputCopy) {
  Builder b;
  const int x = b.input("x", {2, 3});
  const int y = b.op("identity", {x});
  b.outputs({y, b.relu(x)});
  Graph g = b.g;
  remove_identities(g);
  EXPECT_EQ(kinds(g), (std::vector<std::string>{"identity", "relu"}));
  EXPECT_EQ(g.outputs[0], y);
  // A chain of identities from the input to the output keeps exactly one.
  Builder c;
  const int x2 = c.input("x", {2, 3});
  c.outputs({c.op("identity", {c.op("identity", {c.op("identity", {x2})})})});
  Graph h = c.g;
  remove_identities(h);
  ASSERT_EQ(kinds(h), std::vector<std::string>{"identity"});
  EXPECT_EQ(h.ops[0].inputs, std::vector<int>{x2});
  EXPECT_EQ(h.ops[0].outputs, h.outputs);
}

// ---------------------------------------------------------------------------------------------
// fold_batch_norm

struct ConvBn {
  Graph g;
  int conv_weight, conv_bias = -1, y, out;
  std::vector<float> gamma, beta, mean, var;
  double eps = 1e-3;
};

ConvBn conv_bn(bool with_bias, int64_t groups, uint32_t seed) {
  Rng rng(seed);
  Builder b;
  ConvBn r;
  const int64_t cin = 4, cout = groups == 1 ? 5 : 8;
  const int x = b.input("x", {1, cin, 7, 6});
  r.conv_weight = b.random_constant("conv.weight", {cout, cin / groups, 3, 3}, rng);
  if (with_bias) r.conv_bias = b.random_constant("conv.bias", {cout}, rng);
  r.y = b.conv(x, r.conv_weight, r.conv_bias, 2, 1, groups);
  r.gamma = rng.floats(size_t(cout), 0.5, 2.0);
  r.beta = rng.floats(size_t(cout), -1, 1);
  r.mean = rng.floats(size_t(cout), -0.5, 0.5);
  r.var = rng.floats(size_t(cout), 0.01, 3.0);
  r.out = b.batch_norm(r.y, b.constant("bn.weight", {cout}, r.gamma), b.constant("bn.bias", {cout}, r.beta),
                       b.constant("bn.mean", {cout}, r.mean), b.constant("bn.var", {cout}, r.var), r.eps);
  b.outputs({r.out});
  r.g = b.g;
  return r;
}

// conv then batch norm, computed directly in double: no interpreter, no pass code.
std::vector<double> conv_then_bn(const ConvBn& c, const std::vector<float>& x) {
  const Graph& g = c.g;
  const Shape& xs = g.tensors[size_t(g.inputs[0])].shape;
  const Tensor& wt = g.tensors[size_t(c.conv_weight)];
  const Shape& ws = wt.shape;
  const Shape& ys = g.tensors[size_t(c.y)].shape;
  const int64_t groups = xs[1] / ws[1], cout_g = ws[0] / groups;
  std::vector<double> y;
  for (int64_t o = 0; o < ys[1]; ++o)
    for (int64_t oy = 0; oy < ys[2]; ++oy)
      for (int64_t ox = 0; ox < ys[3]; ++ox) {
        double acc = c.conv_bias >= 0 ? g.tensors[size_t(c.conv_bias)].data[size_t(o)] : 0.0;
        for (int64_t ci = 0; ci < ws[1]; ++ci)
          for (int64_t ky = 0; ky < 3; ++ky)
            for (int64_t kx = 0; kx < 3; ++kx) {
              const int64_t iy = oy * 2 - 1 + ky, ix = ox * 2 - 1 + kx;
              if (iy < 0 || iy >= xs[2] || ix < 0 || ix >= xs[3]) continue;
              const int64_t ch = (o / cout_g) * ws[1] + ci;
              acc += double(x[size_t((ch * xs[2] + iy) * xs[3] + ix)]) *
                     wt.data[size_t(((o * ws[1] + ci) * 3 + ky) * 3 + kx)];
            }
        const size_t k = size_t(o);
        y.push_back((acc - c.mean[k]) / std::sqrt(double(c.var[k]) + c.eps) * c.gamma[k] + c.beta[k]);
      }
  return y;
}

TEST(Passes, FoldBatchNormMatchesConvThenBatchNorm) {
  for (bool bias : {true, false}) {
    for (int64_t groups : {int64_t(1), int64_t(4)}) {
      SCOPED_TRACE(::testing::Message() << "bias " << bias << " groups " << groups);
      const ConvBn c = conv_bn(bias, groups, 100 + uint32_t(groups) + bias);
      const std::vector<float> orig_weights = c.g.tensors[size_t(c.conv_weight)].data;
      Graph g = c.g;
      fold_batch_norm(g);
      ASSERT_EQ(kinds(g), std::vector<std::string>{"conv2d"});
      const Op& conv = g.ops[0];
      EXPECT_EQ(g.outputs, std::vector<int>{c.y}) << "the graph output is the conv's own output now";
      EXPECT_EQ(conv.outputs, std::vector<int>{c.y});
      ASSERT_EQ(conv.inputs.size(), 3u) << "a bias is always present after folding";
      EXPECT_NE(conv.inputs[1], c.conv_weight) << "folded weights are a new constant";
      EXPECT_EQ(g.tensors[size_t(c.conv_weight)].data, orig_weights) << "the original is left alone";
      EXPECT_TRUE(g.tensors[size_t(conv.inputs[1])].constant);
      EXPECT_TRUE(g.tensors[size_t(conv.inputs[2])].constant);
      EXPECT_EQ(g.tensors[size_t(conv.inputs[1])].shape, c.g.tensors[size_t(c.conv_weight)].shape);
      EXPECT_EQ(g.tensors[size_t(conv.inputs[2])].shape, (Shape{int64_t(c.gamma.size())}))
          << "the folded bias has one value per output channel";

      Rng rng(7);
      for (int trial = 0; trial < 3; ++trial) {
        const auto x = rng.floats(size_t(c.g.tensors[size_t(c.g.inputs[0])].numel()), -2, 2);
        const std::vector<double> expected = conv_then_bn(c, x);
        const std::vector<double> folded = reference_eval(g, {x})[size_t(c.y)];
        double scale = 0;
        for (double e : expected) scale = std::max(scale, std::fabs(e));
        EXPECT_LE(max_abs_diff(folded, expected), 1e-5 * std::max(1.0, scale));
      }
    }
  }
}

TEST(Passes, FoldBatchNormLeavesSharedOrExposedConvOutputsAlone) {
  {  // the conv output has a second consumer
    ConvBn c = conv_bn(true, 1, 5);
    Builder b{c.g};
    const int extra = b.relu(c.y);
    b.outputs({c.out, extra});
    Graph g = b.g;
    fold_batch_norm(g);
    EXPECT_EQ(kinds(g), (std::vector<std::string>{"conv2d", "batch_norm", "relu"}));
  }
  {  // the conv output is itself a model output
    ConvBn c = conv_bn(true, 1, 6);
    c.g.outputs = {c.out, c.y};
    Graph g = c.g;
    fold_batch_norm(g);
    EXPECT_EQ(kinds(g), (std::vector<std::string>{"conv2d", "batch_norm"}));
  }
  {  // two convs sharing weights, each followed by its own batch norm: each gets its own fold
    Rng rng(8);
    Builder b;
    const int x = b.input("x", {1, 2, 5, 5});
    const int w = b.random_constant("w", {3, 2, 3, 3}, rng);
    auto bn = [&](int y, uint32_t s) {
      Rng r(s);
      return b.batch_norm(y, b.random_constant("g", {3}, r, 0.5, 2), b.random_constant("b", {3}, r),
                          b.random_constant("m", {3}, r), b.random_constant("v", {3}, r, 0.1, 2));
    };
    const int o1 = bn(b.conv(x, w, -1, 1, 1), 1), o2 = bn(b.conv(x, w, -1, 1, 1), 2);
    b.outputs({o1, o2});
    Graph g = b.g;
    fold_batch_norm(g);
    ASSERT_EQ(kinds(g), (std::vector<std::string>{"conv2d", "conv2d"}));
    EXPECT_NE(g.ops[0].inputs[1], g.ops[1].inputs[1]);
    EXPECT_NE(g.tensors[size_t(g.ops[0].inputs[1])].data, g.tensors[size_t(g.ops[1].inputs[1])].data);
    Rng in(9);
    const auto xin = tp::random_inputs(b.g, in);
    const auto expected = outputs_of(b.g, xin), got = outputs_of(g, xin);
    for (size_t o = 0; o < 2; ++o) EXPECT_LE(max_abs_diff(got[o], expected[o]), 1e-5);
  }
}

// ---------------------------------------------------------------------------------------------
// lower_batch_norm

TEST(Passes, LowerBatchNormIntoMulAdd) {
  for (const Shape& shape : {Shape{1, 3, 4, 5}, Shape{2, 3}}) {
    Rng rng(11);
    Builder b;
    const int x = b.input("x", shape);
    const int y = b.batch_norm(x, b.random_constant("g", {3}, rng, 0.5, 2), b.random_constant("b", {3}, rng),
                               b.random_constant("m", {3}, rng), b.random_constant("v", {3}, rng, 0.1, 2), 1e-5);
    b.outputs({y});
    Graph g = b.g;
    lower_batch_norm(g);
    ASSERT_EQ(kinds(g), (std::vector<std::string>{"mul", "add"}));
    EXPECT_EQ(g.ops[0].inputs[0], x);
    EXPECT_EQ(g.ops[1].inputs[0], g.ops[0].outputs[0]);
    EXPECT_EQ(g.ops[1].outputs, std::vector<int>{y}) << "the add writes the batch norm's output";
    Shape channel(shape.size(), 1);
    channel[1] = 3;
    EXPECT_EQ(g.tensors[size_t(g.ops[0].inputs[1])].shape, channel);
    EXPECT_EQ(g.tensors[size_t(g.ops[1].inputs[1])].shape, channel);
    EXPECT_TRUE(g.tensors[size_t(g.ops[0].inputs[1])].constant);
    // Same values as the batch norm formula (the interpreter evaluates batch_norm by its formula
    // before the pass and mul/add with broadcasting after it).
    expect_same_outputs(b.g, lower_batch_norm, 1e-5);
  }
}

// ---------------------------------------------------------------------------------------------
// fuse_activations

TEST(Passes, FuseActivationChains) {
  Rng rng(12);
  Builder b;
  const int x = b.input("x", {1, 2, 5, 5});
  const int conv = b.conv(x, b.random_constant("w", {3, 2, 3, 3}, rng), -1, 1, 1);
  const int out1 = b.clamp(b.relu(conv), -1.0, 0.5);  // relu -> clamp: [0, 0.5]
  const int flat = b.reshape(out1, {1, -1});
  const int lin = b.linear(flat, b.random_constant("fw", {4, 75}, rng), -1);
  const int out2 = b.relu(b.clamp(lin, -2.0, 6.0));  // clamp -> relu: [0, 6]
  const int sum = b.op("add", {out2, out2});
  const int out3 = b.relu(sum);
  const int prod = b.op("mul", {out3, b.constant("k", {1}, {-1.0f})});
  const int out4 = b.clamp(prod, -3.0, 3.0);
  b.outputs({out4});
  Graph g = b.g;
  fuse_activations(g);
  ASSERT_EQ(kinds(g), (std::vector<std::string>{"conv2d", "reshape", "linear", "add", "mul"}));
  EXPECT_EQ(g.ops[0].act_min, 0.0f);
  EXPECT_EQ(g.ops[0].act_max, 0.5f);
  EXPECT_EQ(g.ops[0].outputs, std::vector<int>{out1});
  EXPECT_EQ(g.ops[2].act_min, 0.0f);
  EXPECT_EQ(g.ops[2].act_max, 6.0f);
  EXPECT_EQ(g.ops[2].outputs, std::vector<int>{out2});
  EXPECT_EQ(g.ops[3].act_min, 0.0f);
  EXPECT_TRUE(std::isinf(g.ops[3].act_max));
  EXPECT_EQ(g.ops[4].act_min, -3.0f);
  EXPECT_EQ(g.ops[4].act_max, 3.0f);
  EXPECT_EQ(g.outputs, std::vector<int>{out4});
  expect_same_outputs(b.g, fuse_activations, 1e-9);
}

TEST(Passes, FuseActivationsNotFusable) {
  Rng rng(13);
  {  // the conv output has two consumers: the relu stays an op
    Builder b;
    const int x = b.input("x", {1, 2, 4, 4});
    const int conv = b.conv(x, b.random_constant("w", {2, 2, 1, 1}, rng), -1);
    const int r = b.relu(conv);
    b.outputs({b.op("add", {conv, r})});
    Graph g = b.g;
    fuse_activations(g);
    EXPECT_EQ(kinds(g), (std::vector<std::string>{"conv2d", "relu", "add"}));
    EXPECT_TRUE(std::isinf(g.ops[0].act_min));
    expect_same_outputs(b.g, fuse_activations, 0.0);
  }
  {  // the conv output is a model output as well
    Builder b;
    const int x = b.input("x", {1, 2, 4, 4});
    const int conv = b.conv(x, b.random_constant("w", {2, 2, 1, 1}, rng), -1);
    b.outputs({conv, b.relu(conv)});
    Graph g = b.g;
    fuse_activations(g);
    EXPECT_EQ(kinds(g), (std::vector<std::string>{"conv2d", "relu"}));
  }
  {  // producers that are not conv/linear/add/mul keep their relu
    Builder b;
    const int x = b.input("x", {1, 2, 4, 4});
    const int r1 = b.relu(b.max_pool(x, 2, 2));
    const int r2 = b.clamp(b.op("cat", {x, x}, {{"dim", int64_t(1)}}), 0, 1);
    b.outputs({r1, r2});
    Graph g = b.g;
    fuse_activations(g);
    EXPECT_EQ(kinds(g), (std::vector<std::string>{"max_pool2d", "relu", "cat", "clamp"}));
  }
}

// Bounds that do not intersect: clamp(clamp(x, a, b), c, d) is the constant c when c > b and
// the constant d when d < a; relu(clamp(x, a, b)) with b < 0 is 0 (fused as act_max before
// 5624a5c, which gave b instead of c).
TEST(Passes, FuseActivationsDisjointBounds) {
  Rng rng(14);
  struct Case {
    double a, b, c, d;  // c = d = NaN: the second activation is a relu
    double expected;
  };
  const double relu = std::nan("");
  for (const Case& cs : {Case{-1.0, 1.0, 2.0, 3.0, 2.0}, Case{1.0, 2.0, -3.0, -2.0, -2.0},
                         Case{-5.0, -1.0, relu, relu, 0.0}, Case{-1.0, 6.0, 6.0, 8.0, 6.0}}) {
    Builder b;
    const int x = b.input("x", {1, 6});
    const int lin = b.linear(x, b.random_constant("w", {3, 6}, rng), -1);
    const int first = b.clamp(lin, cs.a, cs.b);
    b.outputs({std::isnan(cs.c) ? b.relu(first) : b.clamp(first, cs.c, cs.d)});
    Graph g = b.g;
    fuse_activations(g);
    ASSERT_EQ(kinds(g), std::vector<std::string>{"linear"});
    EXPECT_EQ(g.ops[0].act_min, g.ops[0].act_max) << "a constant output";
    EXPECT_EQ(g.ops[0].act_min, float(cs.expected));
    const auto in = tp::random_inputs(b.g, rng);
    const auto reference = outputs_of(b.g, in);
    for (double v : reference[0]) ASSERT_EQ(v, cs.expected) << "reference";
    const double fused = outputs_of(g, in)[0][0];
    EXPECT_EQ(fused, cs.expected) << "clamp(x, " << cs.a << ", " << cs.b << ") then "
                                  << (std::isnan(cs.c) ? std::string("relu")
                                                       : "clamp(" + std::to_string(cs.c) + ", " + std::to_string(cs.d) + ")");
  }
}

// ---------------------------------------------------------------------------------------------
// fold_constants

TEST(Passes, FoldConstants) {
  Builder b;
  const int x = b.input("x", {2, 3});
  const int c1 = b.constant("c1", {2, 3}, {1, 2, 3, 4, 5, 6});
  const int c2 = b.constant("c2", {3}, {10, 20, 30});
  const int s = b.op("add", {c1, c2});                    // [[11,22,33],[14,25,36]]
  const int t = b.permute(b.reshape(s, {3, 2}), {1, 0});  // reshape [[11,22],[33,14],[25,36]] -> transpose
  const int m = b.op("mul", {t, b.constant("c3", {2, 1}, {2, -1})});
  const int y = b.op("add", {x, m});
  b.outputs({y});
  Graph g = b.g;
  fold_constants(g);
  ASSERT_EQ(kinds(g), std::vector<std::string>{"add"});
  EXPECT_EQ(g.ops[0].inputs, (std::vector<int>{x, m}));
  ASSERT_TRUE(g.tensors[size_t(m)].constant);
  EXPECT_EQ(g.tensors[size_t(m)].shape, (Shape{2, 3}));
  EXPECT_EQ(g.tensors[size_t(m)].data, (std::vector<float>{22, 66, 50, -22, -14, -36}));
  EXPECT_TRUE(g.tensors[size_t(s)].constant);
  EXPECT_EQ(g.tensors[size_t(s)].data, (std::vector<float>{11, 22, 33, 14, 25, 36}));
  expect_same_outputs(b.g, fold_constants, 0.0);
}

TEST(Passes, FoldConstantsBroadcastsBothWays) {
  Rng rng(15);
  Builder b;
  const int x = b.input("x", {2, 4, 3});
  const int c1 = b.random_constant("c1", {2, 1, 3}, rng);
  const int c2 = b.random_constant("c2", {4, 1}, rng);
  const int m = b.op("mul", {c1, c2});  // [2, 4, 3]
  b.outputs({b.op("add", {x, m})});
  Graph g = b.g;
  fold_constants(g);
  ASSERT_EQ(kinds(g), std::vector<std::string>{"add"});
  const auto& a = b.g.tensors[size_t(c1)].data;
  const auto& c = b.g.tensors[size_t(c2)].data;
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 4; ++j)
      for (int k = 0; k < 3; ++k) EXPECT_EQ(g.tensors[size_t(m)].data[size_t((i * 4 + j) * 3 + k)], a[size_t(i * 3 + k)] * c[size_t(j)]);
}

TEST(Passes, FoldConstantsKeepsOpsWithActivationsOrActivationInputs) {
  Builder b;
  const int x = b.input("x", {3});
  const int c = b.constant("c", {3}, {-1, 0, 1});
  const int r = b.op("add", {c, c});
  b.outputs({b.op("add", {x, r}), b.op("mul", {x, c})});
  Graph g = b.g;
  g.ops[0].act_min = 0.0f;  // a fused relu: kept as an op
  fold_constants(g);
  EXPECT_EQ(kinds(g), (std::vector<std::string>{"add", "add", "mul"}));
  EXPECT_FALSE(g.tensors[size_t(r)].constant);
  // relu/clamp/conv over constants are not folded either (only views, add and mul are).
  Builder d;
  const int y = d.input("y", {3});
  const int rc = d.relu(d.constant("k", {3}, {-1, 0, 1}));
  d.outputs({d.op("add", {y, rc})});
  Graph h = d.g;
  fold_constants(h);
  EXPECT_EQ(kinds(h), (std::vector<std::string>{"relu", "add"}));
}

// ---------------------------------------------------------------------------------------------
// remove_dead_ops

TEST(Passes, RemoveDeadOps) {
  Builder b;
  const int x = b.input("x", {4});
  const int a = b.relu(x);
  const int dead1 = b.clamp(x, 0, 1);
  const int live2 = b.op("add", {a, x});
  const int dead2 = b.relu(dead1);
  b.op("mul", {dead2, live2});  // reads a live tensor but nobody reads it
  const int live3 = b.op("mul", {live2, a});
  b.relu(live3);  // dead, after the last live op
  b.outputs({live3, a});
  Graph g = b.g;
  remove_dead_ops(g);
  ASSERT_EQ(kinds(g), (std::vector<std::string>{"relu", "add", "mul"}));
  EXPECT_EQ(g.ops[0].outputs, std::vector<int>{a});
  EXPECT_EQ(g.ops[1].outputs, std::vector<int>{live2});
  EXPECT_EQ(g.ops[2].outputs, std::vector<int>{live3});
  expect_same_outputs(b.g, remove_dead_ops, 0.0);
  // Nothing dead: unchanged.
  Graph h = g;
  remove_dead_ops(h);
  EXPECT_EQ(kinds(h), kinds(g));
}

// ---------------------------------------------------------------------------------------------
// assign_layouts

TEST(Passes, AssignLayouts) {
  Rng rng(16);
  Builder b;
  const int x = b.input("x", {1, 2, 4, 4});
  const int w = b.random_constant("w", {3, 2, 3, 3}, rng);
  const int c = b.conv(x, w, -1);
  const int f = b.reshape(c, {1, -1});
  const int r3 = b.reshape(c, {3, 2, 2});
  b.outputs({f, r3});
  Graph g = b.g;
  assign_layouts(g);
  EXPECT_TRUE(g.tensors[size_t(x)].nhwc);
  EXPECT_TRUE(g.tensors[size_t(c)].nhwc);
  EXPECT_FALSE(g.tensors[size_t(w)].nhwc) << "constants keep their logical layout";
  EXPECT_FALSE(g.tensors[size_t(f)].nhwc);
  EXPECT_FALSE(g.tensors[size_t(r3)].nhwc);
}

// ---------------------------------------------------------------------------------------------
// fold_flatten_into_linear

struct FlattenLinear {
  Graph g;
  int x, flat, weight, out;
};

FlattenLinear flatten_linear(int64_t c, int64_t h, int64_t w, uint32_t seed) {
  Rng rng(seed);
  Builder b;
  FlattenLinear r;
  r.x = b.input("x", {1, c, h, w});
  r.flat = b.reshape(r.x, {1, -1});
  r.weight = b.random_constant("fc.weight", {5, c * h * w}, rng);
  r.out = b.linear(r.flat, r.weight, b.random_constant("fc.bias", {5}, rng));
  b.outputs({r.out});
  r.g = b.g;
  assign_layouts(r.g);
  return r;
}

TEST(Passes, FoldFlattenIntoLinearPermutesWeightColumns) {
  const int64_t C = 3, H = 4, W = 2;
  const FlattenLinear f = flatten_linear(C, H, W, 17);
  Graph g = f.g;
  fold_flatten_into_linear(g);
  ASSERT_EQ(kinds(g), (std::vector<std::string>{"reshape", "linear"}));
  EXPECT_TRUE(g.tensors[size_t(f.flat)].nhwc) << "the flattened tensor holds NHWC bytes";
  const int new_w = g.ops[1].inputs[1];
  EXPECT_NE(new_w, f.weight);
  EXPECT_EQ(g.tensors[size_t(f.weight)].data, f.g.tensors[size_t(f.weight)].data);
  EXPECT_EQ(g.tensors[size_t(new_w)].shape, f.g.tensors[size_t(f.weight)].shape);

  // flatten + linear over the NCHW input, computed directly, equals the permuted weights applied
  // to the NHWC bytes of the same input.
  const auto& w0 = f.g.tensors[size_t(f.weight)].data;
  const auto& w1 = g.tensors[size_t(new_w)].data;
  Rng rng(18);
  const std::vector<float> x = rng.floats(size_t(C * H * W), -1, 1);
  std::vector<float> x_nhwc(x.size());
  for (int64_t c = 0; c < C; ++c)
    for (int64_t y = 0; y < H; ++y)
      for (int64_t xx = 0; xx < W; ++xx) x_nhwc[size_t((y * W + xx) * C + c)] = x[size_t((c * H + y) * W + xx)];
  for (int64_t o = 0; o < 5; ++o) {
    double ref = 0, perm = 0;
    for (int64_t k = 0; k < C * H * W; ++k) {
      ref += double(w0[size_t(o * C * H * W + k)]) * x[size_t(k)];
      perm += double(w1[size_t(o * C * H * W + k)]) * x_nhwc[size_t(k)];
    }
    EXPECT_NEAR(perm, ref, 1e-12) << o;
  }
  // The permutation is a bijection of each row's columns.
  for (int64_t o = 0; o < 5; ++o) {
    std::vector<float> a(w0.begin() + o * C * H * W, w0.begin() + (o + 1) * C * H * W);
    std::vector<float> bb(w1.begin() + o * C * H * W, w1.begin() + (o + 1) * C * H * W);
    std::sort(a.begin(), a.end());
    std::sort(bb.begin(), bb.end());
    EXPECT_EQ(a, bb);
  }
  // And the interpreter (which reads a flagged flatten as NHWC order) agrees end to end.
  expect_same_outputs(f.g, fold_flatten_into_linear, 1e-9);
}

TEST(Passes, FoldFlattenIntoLinearSkips) {
  {  // one channel, or 1x1 spatial: NHWC bytes already equal NCHW bytes
    for (auto [c, h, w] : {std::tuple<int64_t, int64_t, int64_t>{1, 3, 3}, {6, 1, 1}}) {
      const FlattenLinear f = flatten_linear(c, h, w, 19);
      Graph g = f.g;
      fold_flatten_into_linear(g);
      EXPECT_FALSE(g.tensors[size_t(f.flat)].nhwc);
      EXPECT_EQ(g.ops[1].inputs[1], f.weight);
    }
  }
  {  // the flattened tensor is also read by something other than a linear
    FlattenLinear f = flatten_linear(2, 2, 2, 20);
    Builder b{f.g};
    b.outputs({f.out, b.relu(f.flat)});
    Graph g = b.g;
    fold_flatten_into_linear(g);
    EXPECT_FALSE(g.tensors[size_t(f.flat)].nhwc);
    EXPECT_EQ(g.ops[1].inputs[1], f.weight);
  }
  {  // the flattened tensor is a model output
    FlattenLinear f = flatten_linear(2, 2, 2, 21);
    f.g.outputs.push_back(f.flat);
    Graph g = f.g;
    fold_flatten_into_linear(g);
    EXPECT_FALSE(g.tensors[size_t(f.flat)].nhwc);
  }
  {  // not a flatten: the batch dim changes
    Rng rng(22);
    Builder b;
    const int x = b.input("x", {1, 2, 3, 4});
    const int r = b.reshape(x, {6, 4});
    b.outputs({b.linear(r, b.random_constant("w", {2, 4}, rng), -1)});
    Graph g = b.g;
    assign_layouts(g);
    fold_flatten_into_linear(g);
    EXPECT_FALSE(g.tensors[size_t(r)].nhwc);
  }
  {  // two linears read the flattened tensor: both get permuted weights
    Rng rng(23);
    Builder b;
    const int x = b.input("x", {1, 2, 3, 3});
    const int flat = b.reshape(x, {1, 18});
    const int w1 = b.random_constant("w1", {4, 18}, rng), w2 = b.random_constant("w2", {3, 18}, rng);
    b.outputs({b.linear(flat, w1, -1), b.linear(flat, w2, -1)});
    Graph before = b.g;
    assign_layouts(before);
    Graph g = before;
    fold_flatten_into_linear(g);
    EXPECT_NE(g.ops[1].inputs[1], w1);
    EXPECT_NE(g.ops[2].inputs[1], w2);
    expect_same_outputs(before, fold_flatten_into_linear, 1e-9);
  }
}

// ---------------------------------------------------------------------------------------------
// The whole pass pipeline keeps the model's results.

TEST(Passes, PipelinePreservesResults) {
  Rng rng(24);
  Builder b;
  const int x = b.input("x", {1, 3, 8, 8});
  int y = b.conv(x, b.random_constant("w", {6, 3, 3, 3}, rng), b.random_constant("b", {6}, rng), 1, 1);
  y = b.batch_norm(y, b.random_constant("g", {6}, rng, 0.5, 2), b.random_constant("bb", {6}, rng),
                   b.random_constant("m", {6}, rng), b.random_constant("v", {6}, rng, 0.1, 2));
  y = b.op("identity", {b.relu(y)});
  y = b.max_pool(y, 2, 2);
  const int side = b.batch_norm(y, b.random_constant("g2", {6}, rng, 0.5, 2), b.random_constant("b2", {6}, rng),
                                b.random_constant("m2", {6}, rng), b.random_constant("v2", {6}, rng, 0.1, 2));
  y = b.op("add", {y, side});
  b.relu(y);  // dead
  y = b.reshape(y, {1, -1});
  const int bias = b.op("add", {b.random_constant("b3a", {4}, rng), b.random_constant("b3b", {4}, rng)});
  y = b.clamp(b.linear(y, b.random_constant("fw", {4, 96}, rng), bias), -1, 1);
  b.outputs({b.softmax(y)});
  Graph g = b.g;
  run_graph_passes(g);
  EXPECT_EQ(kinds(g), (std::vector<std::string>{"conv2d", "max_pool2d", "mul", "add", "add", "reshape", "linear", "softmax"}));
  expect_same_outputs(b.g, run_graph_passes, 1e-5);
}

}  // namespace
}  // namespace mcuflow::compiler
