// fold_pads (compiler/src/passes/fold_pads.cpp): which zero pads become the next op's padding,
// which stay ops, and that folding keeps the results; assign_layouts keeps rank-4 tensors that
// meet no image op in PyTorch's order.
#include <gtest/gtest.h>

#include "../test_programs.h"
#include "mcuflow/compiler/passes.h"

namespace mcuflow::compiler {
namespace {

using tp::Builder;
using tp::Rng;

int pad(Builder& b, int x, std::vector<int64_t> amounts, double value = 0.0) {
  return b.op("pad", {x}, {{"pad", std::move(amounts)}, {"value", value}});
}

int avg_pool(Builder& b, int x, int64_t padding, int64_t count_include_pad) {
  return b.op("avg_pool2d", {x},
              {{"kernel", std::vector<int64_t>{2, 2}},
               {"stride", std::vector<int64_t>{2, 2}},
               {"padding", std::vector<int64_t>{padding, padding}},
               {"ceil_mode", int64_t(0)},
               {"count_include_pad", count_include_pad}});
}

size_t count_kind(const Graph& g, const std::string& kind) {
  size_t n = 0;
  for (const Op& op : g.ops) n += op.kind == kind;
  return n;
}

// Runs the fp32 program of `g` with and without fold_pads' effect (the unfolded graph is the
// same graph with every pad also made an output, so no pad has a single reader).
void expect_same_results(const Graph& g) {
  Graph unfolded = g;
  for (const Op& op : g.ops) {
    if (op.kind == "pad") unfolded.outputs.push_back(op.outputs[0]);
  }
  Rng rng(5);
  const auto inputs = tp::random_inputs(g, rng);
  tp::Runner folded_run(tp::compile_fp32(g)), unfolded_run(tp::compile_fp32(unfolded));
  ASSERT_TRUE(folded_run.ok() && unfolded_run.ok());
  for (size_t i = 0; i < inputs.size(); ++i) {
    folded_run.set_input(uint32_t(i), inputs[i]);
    unfolded_run.set_input(uint32_t(i), inputs[i]);
  }
  ASSERT_EQ(folded_run.run(), Error::kOk);
  ASSERT_EQ(unfolded_run.run(), Error::kOk);
  for (uint32_t o = 0; o < g.outputs.size(); ++o) EXPECT_EQ(folded_run.output(o), unfolded_run.output(o)) << o;
}

TEST(FoldPads, ZeroSpatialPadsBecomeConvAndAvgPoolPadding) {
  Rng rng(1);
  Builder b;
  const int x = b.input("x", {1, 3, 7, 6});
  const int conv = b.conv(pad(b, x, {0, 1, 2, 1}), b.random_constant("w", {4, 3, 3, 3}, rng), -1, 2, 1);
  const int pooled = avg_pool(b, pad(b, conv, {1, 0, 0, 1}), 0, 0);
  b.outputs({pooled});
  Graph g = b.g;
  fold_pads(g);
  EXPECT_EQ(count_kind(g, "pad"), 0u);
  const Op& c = g.ops[0];
  EXPECT_EQ(c.inputs[0], x);
  EXPECT_EQ(c.ints_attr("padding"), (std::vector<int64_t>{3, 1}));      // conv's own 1 + pad top 2, left 0
  EXPECT_EQ(c.ints_attr("padding_end"), (std::vector<int64_t>{2, 2}));  // 1 + bottom 1, 1 + right 1
  const Op& p = g.ops[1];
  EXPECT_EQ(p.ints_attr("padding"), (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(p.ints_attr("padding_end"), (std::vector<int64_t>{1, 0}));
  EXPECT_EQ(p.int_attr("count_include_pad"), 1) << "the folded zeros count, as they did";
  EXPECT_EQ(infer_shapes(g, c)[0], b.g.tensors[size_t(conv)].shape);
  EXPECT_EQ(infer_shapes(g, p)[0], b.g.tensors[size_t(pooled)].shape);
  expect_same_results(b.g);
}

TEST(FoldPads, OtherPadsStayOps) {
  Rng rng(2);
  Builder b;
  const int x = b.input("x", {1, 2, 6, 6});
  const int w = b.random_constant("w", {2, 2, 3, 3}, rng);
  const int max_pooled = b.max_pool(pad(b, x, {1, 1, 1, 1}), 2, 2);         // -inf padding, not 0
  const int valued = b.conv(pad(b, x, {1, 1, 1, 1}, 0.5), w, -1);            // not a zero pad
  const int channels = b.conv(pad(b, x, {0, 0, 0, 0, 1, 1}), b.random_constant("w4", {2, 4, 3, 3}, rng), -1);
  const int cropped = b.conv(pad(b, x, {-1, 1, 0, 0}), w, -1);               // crops a column
  const int shared = pad(b, x, {1, 1, 1, 1});                               // two readers
  const int twice = b.op("add", {b.conv(shared, w, -1), b.conv(shared, w, -1)});
  const int excluded = avg_pool(b, pad(b, x, {1, 1, 1, 1}), 1, 0);           // own padding not counted
  b.outputs({max_pooled, valued, channels, cropped, twice, excluded});
  Graph g = b.g;
  fold_pads(g);
  EXPECT_EQ(count_kind(g, "pad"), 6u);
  expect_same_results(b.g);
}

TEST(AssignLayouts, OnlyTensorsAroundImageOpsAreNhwc) {
  Rng rng(3);
  Builder b;
  const int image = b.input("image", {1, 2, 4, 4});
  const int act = b.op("sigmoid", {b.conv(image, b.random_constant("w", {2, 2, 1, 1}, rng), -1)});
  const int heads = b.reshape(b.input("tokens", {1, 8, 6}), {1, 2, 4, 6});  // attention's [batch, heads, T, d]
  const int scores = b.op("matmul", {heads, b.permute(heads, {0, 1, 3, 2})});
  b.outputs({act, b.softmax(scores)});
  Graph g = b.g;
  assign_layouts(g);
  EXPECT_TRUE(g.tensors[size_t(act)].nhwc) << "element-wise after a conv";
  EXPECT_FALSE(g.tensors[size_t(heads)].nhwc);
  EXPECT_FALSE(g.tensors[size_t(scores)].nhwc);
}

}  // namespace
}  // namespace mcuflow::compiler
