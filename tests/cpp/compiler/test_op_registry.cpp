#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "mcuflow/compiler/op_registry.h"

using namespace mcuflow::compiler;

TEST(OpRegistry, EveryKindHasOneDefinitionWithAShapeRuleAndALowering) {
  std::set<std::string> kinds;
  for (const OpDef& def : op_registry()) {
    EXPECT_TRUE(kinds.insert(def.kind).second) << def.kind << " is registered twice";
    EXPECT_EQ(find_op(def.kind), &def) << def.kind;
    EXPECT_NE(def.shape, nullptr) << def.kind;
    // batch_norm alone never reaches lowering: the graph passes fold or lower every one.
    EXPECT_EQ(def.lower == nullptr, std::string(def.kind) == "batch_norm") << def.kind;
  }
  EXPECT_EQ(find_op("sin"), nullptr);
  EXPECT_FALSE(has_trait("sin", kLayoutAgnostic));
}

TEST(OpRegistry, FrontEndVocabularyLeavesOutKindsOnlyPassesMake) {
  const std::vector<std::string> kinds = frontend_kinds();
  EXPECT_EQ(std::count(kinds.begin(), kinds.end(), "input_rows"), 0);
  EXPECT_TRUE(has_trait("input_rows", kInternal));
  EXPECT_EQ(std::count(kinds.begin(), kinds.end(), "conv2d"), 1);
}

TEST(OpRegistry, ByteMoversAreTheViewsAndCopiesThatKeepTheirInputsSpec) {
  std::set<std::string> movers;
  for (const OpDef& def : op_registry()) {
    if ((def.traits & kMovesBytes) == 0) continue;
    movers.insert(def.kind);
    EXPECT_EQ(def.output_quant, OutputQuant::kInput) << def.kind << " moves bytes, so its values keep their spec";
  }
  EXPECT_EQ(movers, (std::set<std::string>{"expand", "identity", "permute", "reshape", "slice", "upsample_nearest2d"}));
}

TEST(OpRegistry, ClampBoundsOfReluAndClampOnly) {
  float lo = 0, hi = 0;
  Op relu{"relu", {}, {}, {}, ""};
  ASSERT_TRUE(clamp_bounds(relu, lo, hi));
  EXPECT_EQ(lo, 0.0f);
  EXPECT_TRUE(std::isinf(hi) && hi > 0);
  Op clamp{"clamp", {}, {}, {{"min", -1.5}, {"max", 6.0}}, ""};
  ASSERT_TRUE(clamp_bounds(clamp, lo, hi));
  EXPECT_EQ(lo, -1.5f);
  EXPECT_EQ(hi, 6.0f);
  Op sigmoid{"sigmoid", {}, {}, {}, ""};
  EXPECT_FALSE(clamp_bounds(sigmoid, lo, hi));
}
