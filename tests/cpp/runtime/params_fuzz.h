// Parameter fuzz shared by the adapter suites: every 32-bit params field of the selected ops is
// set to edge and random values; the verifier either refuses the program with kBadParams or the
// program runs and touches nothing outside its arena (ASan checks reads too in test-sanitize).
#pragma once

#include <gtest/gtest.h>

#include <climits>
#include <iterator>
#include <set>

#include "../test_programs.h"

namespace mcuflow {
namespace tp {

struct ParamsFuzz {
  std::set<uint16_t> kernels;  // kernels whose params were fuzzed
  int rejected = 0;            // variants the verifier refused with kBadParams
  int ran = 0;                 // variants that ran inside their arena
};

// 150 variants per op whose kernel `selected(id)` accepts; call under ASSERT_NO_FATAL_FAILURE.
template <typename Selected>
void fuzz_op_params(const std::vector<std::vector<uint8_t>>& programs, Selected selected, Rng& rng,
                    ParamsFuzz& fuzz) {
  static const int32_t kEdges[] = {0, 1, -1, 2, INT32_MIN, INT32_MAX, 1 << 16, (1 << 16) + 1, 1 << 24, -(1 << 16)};
  for (const auto& base : programs) {
    AlignedBytes probe(base);
    for (uint32_t op = 0; op < header(probe.data()).op_count; ++op) {
      const format::OpRecord& record = op_record(probe.data(), op);
      if (!selected(record.kernel)) continue;
      fuzz.kernels.insert(record.kernel);
      const uint32_t fields = record.params_bytes / 4;
      for (int it = 0; it < 150; ++it) {
        AlignedBytes file(base);
        int32_t* params = reinterpret_cast<int32_t*>(op_params(file.data(), op));
        const uint32_t field = uint32_t(rng.uniform_int(0, int32_t(fields) - 1));
        switch (it % 3) {
          case 0: params[field] = kEdges[rng.uniform_int(0, int32_t(std::size(kEdges)) - 1)]; break;
          case 1: params[field] = rng.uniform_int(-300, 300); break;
          default: params[field] += rng.uniform_int(-3, 3); break;
        }
        fix_crc(file);
        auto program = Program::load(file.cspan(), all_kernels());
        if (!program.ok()) {
          ASSERT_EQ(program.error(), Error::kBadParams) << "kernel " << record.kernel << " field " << field;
          ++fuzz.rejected;
          continue;
        }
        GuardedArena arena(program.value().arena_bytes());
        auto session = Session::bind(program.value(), arena.span());
        ASSERT_TRUE(session.ok());
        fill_inputs_randomly(program.value(), session.value(), rng);
        ASSERT_EQ(session.value().run(), Error::kOk);
        ASSERT_TRUE(arena.guards_intact()) << "kernel " << record.kernel << " field " << field << " wrote outside";
        ++fuzz.ran;
      }
    }
  }
}

}  // namespace tp
}  // namespace mcuflow
