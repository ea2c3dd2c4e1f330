// The init-phase harness (`mcuflow bench`'s init breakdown): built with
// MCUFLOW_LOAD_PROFILE, so Program::load, the adapters' checks and Session::bind mark each phase
// (mcuflow/runtime/load_profile.h); this harness counts the instructions between marks with
// board_counter(). One load + bind of the embedded program at each verification level (prefix
// mcuflow-init: Verify::kFull, mcuflow-wake: Verify::kStructure); no host files. Console lines:
//   mcuflow-init: total <n>              load + bind, marks included (two counter reads apart)
//   mcuflow-init: marks <count> <n>      marks made, and what one costs (two marks in a row)
//   mcuflow-init: phase <p> <n>          instructions counted for phase p (load_profile::Phase)
//   mcuflow-init: op <i> <phase> <n>     of those, what op i's phase took (i below kMaxOps; i ==
//                                        op_count: the program outputs' dataflow)
// The exact init, without marks, is the bench harness's `init` line.
#include <cstdint>

#include "harness_io.h"
#include "mcuflow/board.h"
#include "mcuflow/runtime/load_profile.h"
#include "mcuflow/runtime/runtime.h"
#include "mcuflow_model.h"  // generated: mcuflow_program, mcuflow_kernels(), firmware_arena_regions()

namespace {

using mcuflow::load_profile::kPhaseCount;
using harness::put_uint;

constexpr uint32_t kMaxOps = 128;
// The phases a mark may name per op: kOpChecks, kPreparedTables, kOverlaps, kDataflow.
constexpr uint32_t kFirstOpPhase = mcuflow::load_profile::kOpChecks, kOpPhases = 4;

struct Profile {
  uint32_t phase = kPhaseCount, op = mcuflow::load_profile::kNoOp, since = 0, marks = 0;
  uint32_t phases[kPhaseCount] = {};
  uint32_t ops[kMaxOps][kOpPhases] = {};
};
Profile profile;

void line(const char* prefix, const char* what, const uint32_t* values, uint32_t count) {
  board_puts(prefix);
  board_puts(what);
  for (uint32_t i = 0; i < count; ++i) {
    board_puts(" ");
    put_uint(values[i]);
  }
  board_puts("\n");
}

}  // namespace

// The instructions since the last mark go to its phase (and op); the mark's own, between the two
// counter reads, to none.
extern "C" void mcuflow_load_phase(uint32_t phase, uint32_t op) {
  const uint32_t now = board_counter();
  Profile& p = profile;
  if (p.phase < kPhaseCount) {
    const uint32_t spent = now - p.since;
    p.phases[p.phase] += spent;
    const uint32_t slot = p.phase - kFirstOpPhase;
    if (slot < kOpPhases && p.op < kMaxOps) p.ops[p.op][slot] += spent;
  }
  p.phase = phase;
  if (op != mcuflow::load_profile::kSameOp) p.op = op;
  ++p.marks;
  p.since = board_counter();
}

namespace {

// One profiled load + bind at `verify`, its lines prefixed with `prefix`.
void profile_load(mcuflow::Verify verify, const char* prefix, uint32_t mark_cost) {
  profile = Profile{};
  const mcuflow::Span<const uint8_t> bytes{mcuflow_program, mcuflow_program_size()};
  const uint32_t start = board_counter();
  mcuflow::LoadFailure where;
  auto program = mcuflow::Program::load(bytes, mcuflow_kernels(), &where, verify);
  auto session = program.ok() ? mcuflow::Session::bind(program.value(), firmware_arena_regions(), MCUFLOW_REGION_COUNT)
                              : mcuflow::Result<mcuflow::Session>(program.error());
  mcuflow_load_phase(kPhaseCount, mcuflow::load_profile::kNoOp);  // closes the last phase
  const uint32_t total = board_counter() - start;
  if (!program.ok()) harness::fail("program rejected", program.error(), &where);
  if (!session.ok()) harness::fail("bind failed", session.error());

  line(prefix, "total", &total, 1);
  const uint32_t marks[] = {profile.marks, mark_cost};
  line(prefix, "marks", marks, 2);
  for (uint32_t i = 0; i < kPhaseCount; ++i) {
    const uint32_t values[] = {i, profile.phases[i]};
    line(prefix, "phase", values, 2);
  }
  const uint32_t ops = program.value().op_count() < kMaxOps ? program.value().op_count() + 1 : kMaxOps;
  for (uint32_t i = 0; i < ops; ++i) {
    for (uint32_t k = 0; k < kOpPhases; ++k) {
      const uint32_t values[] = {i, kFirstOpPhase + k, profile.ops[i][k]};
      line(prefix, "op", values, 3);
    }
  }
}

}  // namespace

int main() {
  // What a mark costs the count: one right after another (attributed to a phase no op has).
  mcuflow_load_phase(kPhaseCount - 1, mcuflow::load_profile::kNoOp);
  mcuflow_load_phase(kPhaseCount, mcuflow::load_profile::kNoOp);
  const uint32_t mark_cost = profile.phases[kPhaseCount - 1];
  profile_load(mcuflow::Verify::kFull, "mcuflow-init: ", mark_cost);
  profile_load(mcuflow::Verify::kStructure, "mcuflow-wake: ", mark_cost);
  board_puts("mcuflow: ok\n");
  return 0;
}
