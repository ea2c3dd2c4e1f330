// Shape inference (compiler/src/shape_inference.cpp): output shapes of the front-end vocabulary,
// and the one-line errors for what the kernels cannot do, naming the op and its source line.
#include <gtest/gtest.h>

#include <string>

#include "../test_programs.h"

namespace mcuflow::compiler {
namespace {

using tp::Builder;
using tp::Rng;

// The message of the CompileError that `f` throws ("" when it throws nothing).
template <typename F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const CompileError& e) {
    return e.what();
  }
  return "";
}

Shape shape_of(const Builder& b, int t) { return b.g.tensors[t].shape; }

TEST(ShapeInference, ConvolutionAndPooling) {
  Rng rng(1);
  Builder b;
  const int x = b.input("x", {1, 3, 32, 30});
  const int w = b.random_constant("w", {16, 3, 5, 3}, rng);
  EXPECT_EQ(shape_of(b, b.conv(x, w, -1, 1, 0)), (Shape{1, 16, 28, 28}));
  EXPECT_EQ(shape_of(b, b.conv(x, w, -1, 2, 2)), (Shape{1, 16, 16, 16}));
  EXPECT_EQ(shape_of(b, b.conv(x, w, -1, 1, 0, 1, 2)), (Shape{1, 16, 24, 26}));  // dilation 2
  const int dw = b.random_constant("dw", {6, 1, 3, 3}, rng);                      // depthwise, multiplier 2
  EXPECT_EQ(shape_of(b, b.conv(x, dw, -1, 1, 1, 3)), (Shape{1, 6, 32, 30}));
  EXPECT_EQ(shape_of(b, b.max_pool(x, 2, 2)), (Shape{1, 3, 16, 15}));
  EXPECT_EQ(shape_of(b, b.max_pool(x, 3, 2, 1)), (Shape{1, 3, 16, 15}));
  EXPECT_EQ(shape_of(b, b.avg_pool(x, 4, 4)), (Shape{1, 3, 8, 7}));
  // ceil_mode: PyTorch's rule that the last window starts inside the input or left padding.
  const int c = b.op("max_pool2d", {x},
                     {{"kernel", std::vector<int64_t>{3, 3}},
                      {"stride", std::vector<int64_t>{2, 2}},
                      {"padding", std::vector<int64_t>{0, 0}},
                      {"ceil_mode", int64_t(1)}});
  EXPECT_EQ(shape_of(b, c), (Shape{1, 3, 16, 15}));
  // Stride defaults to the kernel size when the front end passes an empty list.
  const int e = b.op("max_pool2d", {x},
                     {{"kernel", std::vector<int64_t>{2}}, {"stride", std::vector<int64_t>{}}, {"padding", std::vector<int64_t>{0}}});
  EXPECT_EQ(shape_of(b, e), (Shape{1, 3, 16, 15}));
  EXPECT_EQ(shape_of(b, b.mean_hw(x, true)), (Shape{1, 3, 1, 1}));
  EXPECT_EQ(shape_of(b, b.mean_hw(x, false)), (Shape{1, 3}));
  EXPECT_EQ(shape_of(b, b.op("adaptive_avg_pool2d", {x}, {{"output_size", std::vector<int64_t>{4, 5}}})),
            (Shape{1, 3, 4, 5}));
}

TEST(ShapeInference, ElementwiseAndViews) {
  Rng rng(2);
  Builder b;
  const int x = b.input("x", {2, 3, 4, 5});
  EXPECT_EQ(shape_of(b, b.op("add", {x, b.random_constant("c", {3, 1, 1}, rng)})), (Shape{2, 3, 4, 5}));
  EXPECT_EQ(shape_of(b, b.op("mul", {b.random_constant("s", {1}, rng), x})), (Shape{2, 3, 4, 5}));
  EXPECT_EQ(shape_of(b, b.op("add", {b.input("a", {4, 1}), b.input("c", {3})})), (Shape{4, 3}));
  EXPECT_EQ(shape_of(b, b.reshape(x, {2, -1})), (Shape{2, 60}));
  EXPECT_EQ(shape_of(b, b.reshape(x, {-1, 4, 5})), (Shape{6, 4, 5}));
  EXPECT_EQ(shape_of(b, b.permute(x, {0, 2, 3, 1})), (Shape{2, 4, 5, 3}));
  EXPECT_EQ(shape_of(b, b.permute(x, {-4, -1, 1, 2})), (Shape{2, 5, 3, 4}));
  EXPECT_EQ(shape_of(b, b.cat({x, x, b.input("y", {2, 1, 4, 5})}, 1)), (Shape{2, 7, 4, 5}));
  EXPECT_EQ(shape_of(b, b.cat({x, x}, -1)), (Shape{2, 3, 4, 10}));
  EXPECT_EQ(shape_of(b, b.softmax(x, 3)), (Shape{2, 3, 4, 5}));
  EXPECT_EQ(shape_of(b, b.clamp(x, -1, 1)), (Shape{2, 3, 4, 5}));
  const int w = b.random_constant("w", {7, 5}, rng);
  EXPECT_EQ(shape_of(b, b.linear(x, w, -1)), (Shape{2, 3, 4, 7}));
}

TEST(ShapeInference, UnsupportedKindNamesOpSourceAndSupportedOps) {
  Builder b;
  const int x = b.input("x", {1, 8});
  const std::string msg = error_of([&] { b.op("fft_rfft2", {x}, {}, "net.py:42: y = torch.fft.rfft2(x)"); });
  EXPECT_EQ(msg.rfind("fft_rfft2 at net.py:42: y = torch.fft.rfft2(x): unsupported op", 0), 0u) << msg;
  for (const char* kind : {"conv2d", "linear", "batch_norm", "relu", "clamp", "add", "mul", "max_pool2d", "avg_pool2d",
                           "mean", "adaptive_avg_pool2d", "reshape", "permute", "softmax", "cat", "identity"}) {
    EXPECT_NE(msg.find(kind), std::string::npos) << kind << " missing from: " << msg;
  }
  EXPECT_EQ(msg.find("input_rows"), std::string::npos) << "a kind only a pass makes is offered: " << msg;
  EXPECT_EQ(msg.find('\n'), std::string::npos) << "one line";
  // No source: still names the op.
  const std::string anon = error_of([&] { b.op("my_custom_op", {x, x}, {}, "<unknown>"); });
  EXPECT_EQ(anon.rfind("my_custom_op at <unknown>: unsupported op", 0), 0u) << anon;
}

TEST(ShapeInference, ConvolutionGroupsMustDivideBothChannelCounts) {
  Rng rng(3);
  Builder b;
  const int x = b.input("x", {1, 4, 8, 8});
  auto grouped = [&](const std::vector<int64_t>& w_shape, int64_t groups) {
    return b.op("conv2d", {x, b.random_constant("wg" + std::to_string(groups), w_shape, rng)},
                {{"stride", std::vector<int64_t>{1, 1}},
                 {"padding", std::vector<int64_t>{0, 0}},
                 {"dilation", std::vector<int64_t>{1, 1}},
                 {"groups", groups}},
                "net.py:7: self.conv(x)");
  };
  EXPECT_EQ(shape_of(b, grouped({8, 2, 3, 3}, 2)), (Shape{1, 8, 6, 6}));
  // 6 output channels do not split into 4 groups; 3 groups do not split 4 input channels.
  const std::string msg = error_of([&] { grouped({6, 1, 3, 3}, 4); });
  EXPECT_EQ(msg.rfind("conv2d at net.py:7: self.conv(x): weight [6, 1, 3, 3] and groups=4 do not match input", 0), 0u)
      << msg;
  EXPECT_NE(error_of([&] { grouped({6, 1, 3, 3}, 3); }).find("and groups=3 do not match input"), std::string::npos);
  // Weight that does not match the groups at all.
  const std::string mismatch = error_of([&] { b.conv(x, b.random_constant("w2", {8, 3, 3, 3}, rng), -1); });
  EXPECT_NE(mismatch.find("do not match input [1, 4, 8, 8]"), std::string::npos) << mismatch;
  // Non-constant weights, kernel larger than the input, bad stride.
  EXPECT_NE(error_of([&] { b.conv(x, b.input("wv", {8, 4, 3, 3}), -1); }).find("weights must be constant"),
            std::string::npos);
  EXPECT_NE(error_of([&] { b.conv(x, b.random_constant("big", {2, 4, 9, 9}, rng), -1); }).find("kernel larger"),
            std::string::npos);
  EXPECT_NE(error_of([&] { b.conv(x, b.random_constant("w1", {8, 4, 3, 3}, rng), -1, 0); }).find("conv2d at"),
            std::string::npos);
}

TEST(ShapeInference, BadBroadcastIsRejected) {
  Builder b;
  const int x = b.input("x", {1, 3, 4});
  const int y = b.input("y", {1, 2, 4});
  const std::string msg = error_of([&] { b.op("add", {x, y}, {}, "net.py:3: x + y"); });
  EXPECT_EQ(msg, "add at net.py:3: x + y: shapes [1, 3, 4] and [1, 2, 4] do not broadcast");
  EXPECT_NE(error_of([&] { b.op("mul", {x, b.input("z", {5})}); }).find("do not broadcast"), std::string::npos);
  EXPECT_NE(error_of([&] { b.op("add", {x}); }).find("expects two inputs"), std::string::npos);
  EXPECT_NE(error_of([&] { b.op("add", {x, x}, {{"alpha", 2.0}}); }).find("alpha"), std::string::npos);
}

TEST(ShapeInference, SoftmaxOverAnyDim) {
  Builder b;
  const int x = b.input("x", {1, 4, 5});
  EXPECT_NE(error_of([&] { b.softmax(x, 3); }).find("out of range for rank 3"), std::string::npos);
  EXPECT_EQ(shape_of(b, b.softmax(x, 1)), (Shape{1, 4, 5}));
  EXPECT_EQ(error_of([&] { b.softmax(x, -1); }), "");
  EXPECT_EQ(error_of([&] { b.softmax(x, 2); }), "");
}

TEST(ShapeInference, OtherRejections) {
  Rng rng(4);
  Builder b;
  const int x = b.input("x", {1, 3, 8, 8});
  EXPECT_NE(error_of([&] { b.reshape(x, {5, -1}); }).find("cannot reshape [1, 3, 8, 8] into"), std::string::npos);
  EXPECT_NE(error_of([&] { b.reshape(x, {-1, -1}); }).find("more than one -1"), std::string::npos);
  EXPECT_NE(error_of([&] { b.permute(x, {0, 1, 1, 2}); }).find("not a permutation"), std::string::npos);
  EXPECT_NE(error_of([&] { b.permute(x, {0, 1, 2}); }).find("perm length"), std::string::npos);
  EXPECT_NE(error_of([&] { b.cat({x, b.input("y", {1, 3, 7, 8})}, 1); }).find("differ outside the cat dim"),
            std::string::npos);
  EXPECT_NE(error_of([&] { b.max_pool(x, 2, 2, 2); }).find("invalid kernel/stride/padding"), std::string::npos);
  EXPECT_NE(error_of([&] { b.clamp(x, 1.0, -1.0); }).find("min must not exceed max"), std::string::npos);
  EXPECT_NE(error_of([&] { b.linear(x, b.random_constant("w", {4, 7}, rng), -1); }).find("does not match weight"),
            std::string::npos);
  EXPECT_NE(error_of([&] { b.linear(b.input("f", {1, 7}), b.input("wv", {4, 7}), -1); }).find("weights must be constant"),
            std::string::npos);
  const int m = b.random_constant("m", {3}, rng);
  EXPECT_NE(error_of([&] { b.batch_norm(x, m, m, m, b.random_constant("v4", {4}, rng)); }).find("one value per channel"),
            std::string::npos);
  EXPECT_NE(error_of([&] { b.op("relu", {12345}); }).find("input tensor id out of range"), std::string::npos);
  EXPECT_NE(error_of([&] { b.op("conv2d", {x}); }).find("expects at least 2 inputs"), std::string::npos);
  EXPECT_NE(error_of([&] { b.op("conv2d", {x, b.random_constant("w3", {2, 3, 1, 1}, rng)}); })
                .find("missing attribute 'stride'"),
            std::string::npos);
}

}  // namespace
}  // namespace mcuflow::compiler
