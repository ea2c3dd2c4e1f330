// split_into_patches (compiler/src/passes/split_into_patches.cpp): the band structure (a slice
// per band, the stage's convolutions per band, one cat), each band's input rows against a brute
// force walk of the receptive field, and identical float results with and without bands.
#include <gtest/gtest.h>

#include <set>

#include "../test_programs.h"
#include "mcuflow/compiler/passes.h"

namespace mcuflow::compiler {
namespace {

using tp::Builder;
using tp::Rng;

struct Layer {
  int64_t out_c, k, stride, pad, dilation;
  bool depthwise;
};

// input [1, 3, size, size] -> the layers (each + relu) -> mean over H, W.
Graph chain(const std::vector<Layer>& layers, int64_t size, uint32_t seed) {
  Rng rng(seed);
  Builder b;
  int x = b.input("x", {1, 3, size, size});
  int64_t c = 3;
  for (size_t i = 0; i < layers.size(); ++i) {
    const Layer& l = layers[i];
    const int64_t out_c = l.depthwise ? c : l.out_c;
    const int w = b.random_constant("w" + std::to_string(i), {out_c, l.depthwise ? 1 : c, l.k, l.k}, rng, -0.5, 0.5);
    const int bias = b.random_constant("b" + std::to_string(i), {out_c}, rng, -0.1, 0.1);
    x = b.relu(b.conv(x, w, bias, l.stride, l.pad, l.depthwise ? c : 1, l.dilation));
    c = out_c;
  }
  b.outputs({b.mean_hw(x, false)});
  run_graph_passes(b.g);
  return b.g;
}

// Input rows of the first conv that output rows `rows` of the last one read, by walking every
// tap of every window.
std::set<int64_t> receptive_rows(const Graph& g, std::set<int64_t> rows) {
  for (size_t i = g.ops.size(); i-- > 0;) {
    const Op& op = g.ops[i];
    if (op.kind != "conv2d") continue;
    const int64_t stride = op.ints_attr("stride")[0], pad = op.ints_attr("padding")[0];
    const int64_t dilation = op.ints_attr("dilation")[0], taps = g.tensors[size_t(op.inputs[1])].shape[2];
    const int64_t in_h = g.tensors[size_t(op.inputs[0])].shape[2];
    std::set<int64_t> in;
    for (int64_t r : rows)
      for (int64_t t = 0; t < taps; ++t)
        if (const int64_t y = r * stride - pad + t * dilation; y >= 0 && y < in_h) in.insert(y);
    rows = std::move(in);
  }
  return rows;
}

size_t count_kind(const Graph& g, const std::string& kind) {
  size_t n = 0;
  for (const Op& op : g.ops) n += op.kind == kind;
  return n;
}

void expect_same_results(const Graph& plain, const Graph& banded) {
  Rng rng(3);
  const auto inputs = tp::random_inputs(plain, rng);
  tp::Runner a(tp::compile_fp32(plain)), b(tp::compile_fp32(banded));
  ASSERT_TRUE(a.ok() && b.ok());
  a.set_input(0, inputs[0]);
  b.set_input(0, inputs[0]);
  ASSERT_EQ(a.run(), Error::kOk);
  ASSERT_EQ(b.run(), Error::kOk);
  EXPECT_EQ(a.output(0), b.output(0));
}

TEST(SplitIntoPatches, BandsReadTheirReceptiveFieldAndComputeTheSameValues) {
  const std::vector<std::vector<Layer>> models = {
      {{16, 3, 1, 1, 1, false}, {0, 3, 1, 1, 1, true}, {32, 1, 1, 0, 1, false}, {0, 3, 2, 1, 1, true}, {8, 1, 1, 0, 1, false}},
      {{6, 5, 1, 2, 1, false}, {0, 3, 1, 2, 2, true}, {4, 3, 2, 0, 1, false}},
  };
  for (size_t m = 0; m < models.size(); ++m) {
    const Graph plain = chain(models[m], 40, uint32_t(m + 1));
    const size_t convs = count_kind(plain, "conv2d");
    for (int bands : {2, 3, 5}) {
      Graph g = plain;
      split_into_patches(g, bands, 4);
      ASSERT_EQ(count_kind(g, "slice"), size_t(bands)) << m;
      ASSERT_EQ(count_kind(g, "cat"), 1u);
      const size_t stage = (count_kind(g, "conv2d") - convs) / size_t(bands - 1);
      ASSERT_GE(stage, 1u);
      ASSERT_EQ(count_kind(g, "conv2d"), convs + stage * size_t(bands - 1));
      // The stage alone, to walk its receptive field.
      Graph stage_graph = plain;
      stage_graph.ops.resize(stage);
      const Op& cat = *std::find_if(g.ops.begin(), g.ops.end(), [](const Op& op) { return op.kind == "cat"; });
      int64_t row = 0;
      for (int b = 0; b < bands; ++b) {
        const int64_t rows = g.tensors[size_t(cat.inputs[size_t(b)])].shape[2];
        std::set<int64_t> out;
        for (int64_t r = row; r < row + rows; ++r) out.insert(r);
        row += rows;
        const std::set<int64_t> need = receptive_rows(stage_graph, out);
        const Op& slice = g.ops[size_t(b) * (stage + 1)];
        ASSERT_EQ(slice.kind, "slice");
        EXPECT_EQ(slice.int_attr("start"), *need.begin()) << m << " band " << b;
        EXPECT_EQ(slice.int_attr("end"), *need.rbegin() + 1) << m << " band " << b;
        EXPECT_EQ(int64_t(need.size()), *need.rbegin() + 1 - *need.begin()) << "contiguous";
      }
      EXPECT_EQ(row, g.tensors[size_t(cat.outputs[0])].shape[2]);
      expect_same_results(plain, g);
    }
  }
}

TEST(SplitIntoPatches, NoBandsWhereTheyCannotLowerThePeak) {
  // A 1x1 layer keeps every map the size of the input: no stage end lowers the estimate.
  const Graph plain = chain({{3, 1, 1, 0, 1, false}}, 16, 4);
  Graph g = plain;
  split_into_patches(g, 4, 4);
  EXPECT_EQ(g.ops.size(), plain.ops.size());
  EXPECT_THROW(split_into_patches(g, 0, 4), CompileError);
}

// stream_input: the input has no buffer, and Session::run fetches each band's rows through the
// InputReader (in order, inside the input, covering it), computing what the unbanded program does;
// without a reader, or with one that fails, run reports kInputUnavailable.
TEST(SplitIntoPatches, StreamedInputRowsComeThroughTheReader) {
  const Graph plain = chain({{16, 3, 1, 1, 1, false}, {0, 3, 2, 1, 1, true}, {8, 1, 1, 0, 1, false}}, 24, 5);
  CompileOptions o;
  o.target = tp::kReferenceTarget;
  o.precision = Precision::kFloat32;
  o.patches = 4;
  o.stream_input = true;
  tp::Runner streamed(compile_graph(plain, o, {}));
  ASSERT_TRUE(streamed.ok());
  ASSERT_TRUE(streamed.program().input(0).streamed);
  EXPECT_EQ(streamed.session().input_buffer(0).error(), Error::kStreamedInput);

  tp::Rng rng(9);
  const auto input = tp::random_inputs(plain, rng)[0];
  const TensorInfo t = streamed.program().input(0);
  struct Source {
    std::vector<uint8_t> bytes;
    std::vector<std::pair<uint32_t, uint32_t>> reads;  // (offset, bytes)
    bool fail = false;
  } source{logical_to_physical(reinterpret_cast<const uint8_t*>(input.data()), tp::logical_shape(t), t.layout, 4)};
  const InputReader reader{[](void* context, uint32_t i, uint32_t offset, uint8_t* dst, uint32_t n) {
                             auto& s = *static_cast<Source*>(context);
                             if (s.fail || i != 0 || uint64_t(offset) + n > s.bytes.size()) return false;
                             std::memcpy(dst, s.bytes.data() + offset, n);
                             s.reads.emplace_back(offset, n);
                             return true;
                           },
                           &source};
  EXPECT_EQ(streamed.session().run(), Error::kInputUnavailable);
  source.fail = true;
  EXPECT_EQ(streamed.session().run(&reader), Error::kInputUnavailable);
  source.fail = false;
  source.reads.clear();
  ASSERT_EQ(streamed.session().run(&reader), Error::kOk);
  EXPECT_EQ(streamed.output(0), tp::run_once(tp::compile_fp32(plain), input));
  ASSERT_EQ(source.reads.size(), 4u);
  EXPECT_EQ(source.reads.front().first, 0u);
  for (size_t k = 1; k < source.reads.size(); ++k) {
    EXPECT_GT(source.reads[k].first, source.reads[k - 1].first);
    EXPECT_LE(source.reads[k].first, source.reads[k - 1].first + source.reads[k - 1].second);  // no row skipped
  }
  EXPECT_EQ(source.reads.back().first + source.reads.back().second, source.bytes.size());
}

}  // namespace
}  // namespace mcuflow::compiler
