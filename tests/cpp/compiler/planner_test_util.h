// Helpers shared by the planner tests (test_planner_*.cpp).
#pragma once
#include <gtest/gtest.h>

#include <vector>

#include "../test_programs.h"

namespace mcuflow::compiler::planner_test {

// Runs a compiled program once on seeded random inputs in [-1, 1] (one exactly sized, guarded
// arena) and returns all its outputs, concatenated.
inline std::vector<float> run_program(const std::vector<uint8_t>& bytes, uint32_t seed) {
  tp::Runner r(bytes);
  EXPECT_TRUE(r.ok()) << error_name(r.error());
  if (!r.ok()) return {};
  tp::Rng rng(seed);
  for (uint32_t i = 0; i < r.program().input_count(); ++i) r.set_input(i, rng.floats(r.program().input(i).bytes / 4, -1, 1));
  EXPECT_EQ(r.run(), Error::kOk);
  EXPECT_TRUE(r.arena().guards_intact());
  std::vector<float> out;
  for (uint32_t o = 0; o < r.program().output_count(); ++o) {
    const auto v = r.output(o);
    out.insert(out.end(), v.begin(), v.end());
  }
  return out;
}

}  // namespace mcuflow::compiler::planner_test
