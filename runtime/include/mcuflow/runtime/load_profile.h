// Where initialization spends its instructions: Program::load, the kernel adapters'
// checks and Session::bind mark the start of each phase. The marks exist only in a build with
// MCUFLOW_LOAD_PROFILE (the init_phases firmware harness behind `mcuflow bench`); every other
// build, the runtime footprint included, compiles them to nothing.
#pragma once
#include <cstdint>

namespace mcuflow::load_profile {

enum Phase : uint32_t {
  kHeader,          // magic, version, header fields and sections
  kChecksum,        // CRC-32 of the file body
  kTensors,         // every tensor record
  kIo,              // the input and output table
  kOpChecks,        // an op's record and its kernel adapter's check (op index given)
  kPreparedTables,  // inside an adapter's check: a prepared table compared with its recomputation
  kOverlaps,        // the op's slots that share bytes, against its kernel's aliasing contract
  kDataflow,        // def before use of the bytes the op (or, op == op_count, the outputs) reads
  kCopies,          // copied constants and states: nothing else writes or shares their bytes
  kBindChecks,      // Session::bind: the regions given
  kBindCopies,      // Session::bind: constants copied into RAM, states' initial values
  kPhaseCount,
};

// The op a phase's instructions belong to; kSameOp: the one the last mark named.
constexpr uint32_t kNoOp = UINT32_MAX - 1, kSameOp = UINT32_MAX;

}  // namespace mcuflow::load_profile

#ifdef MCUFLOW_LOAD_PROFILE
// Defined by the harness: from here on, instructions count for `phase` (of `op`).
extern "C" void mcuflow_load_phase(uint32_t phase, uint32_t op);
#define MCUFLOW_LOAD_PHASE(phase, op) mcuflow_load_phase(::mcuflow::load_profile::phase, (op))
#else
#define MCUFLOW_LOAD_PHASE(phase, op) ((void)0)
#endif

namespace mcuflow::load_profile {

// Inside an adapter's check: kPreparedTables for its scope, then kOpChecks again.
struct PreparedTableScope {
  PreparedTableScope() { MCUFLOW_LOAD_PHASE(kPreparedTables, kSameOp); }
  ~PreparedTableScope() { MCUFLOW_LOAD_PHASE(kOpChecks, kSameOp); }
};

}  // namespace mcuflow::load_profile
