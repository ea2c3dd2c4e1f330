// Memory regions (compiler/src/planner.cpp, runtime/src/program.cpp): activations fill the
// fastest region up to its capacity and spill to the next; weights of the costliest layers are
// copied into fast RAM when it has room; a multi-region program binds one span per region and
// computes the same bytes as the single-region program.
#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <string>

#include "../test_programs.h"
#include "mcuflow/compiler/planner.h"

namespace mcuflow::compiler {
namespace {

using tp::Rng;

// conv 4->16 (3x3), relu, conv 16->16, relu, pool, conv 16->8, mean, linear: 16x16 maps of
// 16 channels (4 KiB in int8) keep more than a few KiB live.
Graph conv_stack(uint32_t seed) {
  Rng rng(seed);
  tp::Builder b;
  const int x = b.input("x", {1, 4, 16, 16});
  int y = b.relu(b.conv(x, b.random_constant("c1", {16, 4, 3, 3}, rng, -0.4, 0.4), -1, 1, 1));
  y = b.relu(b.conv(y, b.random_constant("c2", {16, 16, 3, 3}, rng, -0.2, 0.2), -1, 1, 1));
  y = b.max_pool(y, 2, 2);
  y = b.relu(b.conv(y, b.random_constant("c3", {8, 16, 1, 1}, rng, -0.4, 0.4), -1));
  b.outputs({b.linear(b.mean_hw(y, false), b.random_constant("fc", {5, 8}, rng, -0.5, 0.5), -1)});
  return b.g;
}

std::vector<uint8_t> compile(const Graph& g, std::vector<MemoryRegion> regions, bool copy_weights) {
  CompileOptions o;
  o.target = tp::kReferenceTarget;  // reference kernels stream input 1 (the weights)
  o.regions = std::move(regions);
  o.copy_weights = copy_weights;
  return compile_graph(g, o, tp::random_calibration(g, 4, 5));
}

// A program bound to one exactly sized, guarded arena per region.
class RegionRunner {
 public:
  explicit RegionRunner(const std::vector<uint8_t>& bytes) : file_(bytes) {
    auto p = Program::load(file_.cspan(), all_kernels());
    EXPECT_TRUE(p.ok()) << error_name(p.error());
    program_ = p.value();
    std::vector<Span<uint8_t>> spans;
    for (uint32_t r = 0; r < program_.region_count(); ++r) {
      arenas_.push_back(std::make_unique<tp::GuardedArena>(program_.region_bytes(r)));
      spans.push_back(arenas_.back()->span());
    }
    auto s = Session::bind(program_, spans.data(), uint32_t(spans.size()));
    EXPECT_TRUE(s.ok()) << error_name(s.error());
    session_ = s.value();
  }
  std::vector<float> run(const std::vector<float>& input) {
    const TensorInfo t = program_.input(0);
    const auto phys = logical_to_physical(reinterpret_cast<const uint8_t*>(input.data()), tp::logical_shape(t), t.layout, 4);
    std::memcpy(session_.input_buffer(0).value().data, phys.data(), phys.size());
    EXPECT_EQ(session_.run(), Error::kOk);
    for (const auto& a : arenas_) EXPECT_TRUE(a->guards_intact());
    const auto out = session_.output_buffer(0).value();
    std::vector<float> v(out.size / 4);
    std::memcpy(v.data(), out.data, out.size);
    return v;
  }
  const Program& program() const { return program_; }
  const Session& session() const { return session_; }

 private:
  tp::AlignedBytes file_;
  Program program_;
  std::vector<std::unique_ptr<tp::GuardedArena>> arenas_;
  Session session_;
};

std::string metadata(const Program& p) {
  return std::string(reinterpret_cast<const char*>(p.metadata().data), p.metadata().size);
}

TEST(PlannerRegions, ActivationsSpillFromAFullFastRegionAndStayBitExact) {
  const Graph g = conv_stack(1);
  const auto one = compile(g, {}, false);
  tp::Runner single(one);
  ASSERT_TRUE(single.ok());
  const uint32_t whole = single.program().arena_bytes();
  ASSERT_EQ(single.program().region_count(), 1u);
  // A fast region with room for a third of the single-region plan, then a large slow one.
  const uint32_t fast = whole / 3 / 16 * 16;
  const auto split = compile(g, {{"TCM", fast, true}, {"SRAM", UINT32_MAX, false}}, false);
  RegionRunner r(split);
  ASSERT_EQ(r.program().region_count(), 2u);
  EXPECT_LE(r.program().region_bytes(0), fast);
  EXPECT_GT(r.program().region_bytes(0), 0u);
  EXPECT_GT(r.program().region_bytes(1), 0u);
  EXPECT_NE(metadata(r.program()).find("\"spilled\":[{"), std::string::npos);
  for (uint32_t s = 1; s <= 3; ++s) {
    Rng rng(s);
    const auto x = rng.floats(4 * 16 * 16, -1, 1);
    single.set_input(0, x);
    ASSERT_EQ(single.run(), Error::kOk);
    EXPECT_EQ(r.run(x), single.output(0));
  }
}

TEST(PlannerRegions, EverythingFitsInTheFastRegion) {
  const Graph g = conv_stack(2);
  const auto bytes = compile(g, {{"TCM", 1u << 20, true}, {"SRAM", UINT32_MAX, false}}, false);
  RegionRunner r(bytes);
  EXPECT_EQ(r.program().region_count(), 1u) << "an unused slow region is dropped";
  EXPECT_EQ(r.program().arena_bytes(), tp::Runner(compile(g, {}, false)).program().arena_bytes());
}

TEST(PlannerRegions, CostliestWeightsAreCopiedIntoFastRoom) {
  const Graph g = conv_stack(3);
  const auto plain = compile(g, {{"TCM", 1u << 20, true}}, false);
  const auto copied = compile(g, {{"TCM", 1u << 20, true}}, true);
  RegionRunner a(plain), b(copied);
  uint32_t copies = 0;
  tp::AlignedBytes file(copied);
  for (uint32_t t = 0; t < tp::header(file.data()).tensor_count; ++t) {
    const format::TensorRecord& rec = tp::tensor_record(file.data(), t);
    if (rec.storage != format::Storage::kCopiedConstant) continue;
    ++copies;
    // The session reads the copy, which holds the program's constant bytes.
    const auto buf = b.session().tensor_buffer(t).value();
    EXPECT_EQ(0, std::memcmp(buf.data, tp::constant_data(file.data(), t), rec.bytes));
    EXPECT_GE(rec.copy_offset, a.program().arena_bytes()) << "copies sit after the activations";
  }
  EXPECT_EQ(copies, 4u) << "three convs and the linear layer";
  EXPECT_GT(b.program().arena_bytes(), a.program().arena_bytes());
  EXPECT_NE(metadata(b.program()).find("\"copied_weights\":[{"), std::string::npos);
  Rng rng(7);
  const auto x = rng.floats(4 * 16 * 16, -1, 1);
  EXPECT_EQ(a.run(x), b.run(x));
}

TEST(PlannerRegions, WeightsOnlyWhereTheyFit) {
  const Graph g = conv_stack(4);
  const auto plain = compile(g, {{"TCM", 1u << 20, true}}, false);
  tp::Runner r(plain);
  ASSERT_TRUE(r.ok());
  // Room for the activations plus 100 bytes: only the smallest weights (fc, 40 bytes) fit.
  const auto tight = compile(g, {{"TCM", r.program().arena_bytes() + 100, true}}, true);
  const std::string m = metadata(RegionRunner(tight).program());
  EXPECT_NE(m.find("\"copied_weights\":[{\"tensor\":\"fc\""), std::string::npos) << m;
  // A slow region never receives weights.
  const auto slow = compile(g, {{"SRAM", 1u << 20, false}}, true);
  EXPECT_NE(metadata(RegionRunner(slow).program()).find("\"copied_weights\":[]"), std::string::npos);
}

TEST(PlannerRegions, BindChecksEveryRegion) {
  const Graph g = conv_stack(5);
  const auto bytes = compile(g, {{"TCM", 2048, true}, {"SRAM", UINT32_MAX, false}}, false);
  tp::AlignedBytes file(bytes);
  auto loaded = Program::load(file.cspan(), all_kernels());
  ASSERT_TRUE(loaded.ok());
  const Program& p = loaded.value();
  ASSERT_EQ(p.region_count(), 2u);
  tp::AlignedBytes r0(p.region_bytes(0) + 16), r1(p.region_bytes(1) + 16);
  const Span<uint8_t> good[] = {{r0.data(), p.region_bytes(0)}, {r1.data(), p.region_bytes(1)}};
  EXPECT_TRUE(Session::bind(p, good, 2).ok());
  EXPECT_EQ(Session::bind(p, good, 1).error(), Error::kBadArgument);
  EXPECT_EQ(Session::bind(p, good[0]).error(), Error::kBadArgument) << "one span for a two-region program";
  EXPECT_EQ(Session::bind(p, nullptr, 2).error(), Error::kBadArgument);
  const Span<uint8_t> small[] = {good[0], {r1.data(), p.region_bytes(1) - 16}};
  EXPECT_EQ(Session::bind(p, small, 2).error(), Error::kArenaTooSmall);
  const Span<uint8_t> misaligned[] = {good[0], {r1.data() + 4, p.region_bytes(1)}};
  EXPECT_EQ(Session::bind(p, misaligned, 2).error(), Error::kArenaMisaligned);
}

TEST(PlannerRegions, AtMostFourRegions) {
  const Graph g = conv_stack(6);
  EXPECT_THROW(compile(g, {{"a", 16, true}, {"b", 16, true}, {"c", 16, false}, {"d", 16, false}, {"e", 16, false}}, false),
               CompileError);
}

}  // namespace
}  // namespace mcuflow::compiler
