// Ahead-of-time memory planning (docs/memory_planning.md): the op order (schedule_ops), which
// ops run in place, and every arena tensor's offset. Views share their root's bytes; the arena
// size, the liveness lower bound and a report explaining any byte above it go into the program.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "mcuflow/compiler/lowered.h"

namespace mcuflow::compiler {

struct Lifetime {
  int first = 0;  // op index that writes it (-1: a program input)
  int last = 0;   // op index of its last read (op_count: a program output)
};

// Lifetimes of root (non-view) arena tensors, indexed like program tensors; views and
// constants get {0, -1} (empty).
std::vector<Lifetime> root_lifetimes(const LoweredProgram& p);

// A RAM region the plan may use (python/mcuflow/boards.py describes each board's).
struct MemoryRegion {
  std::string name;
  uint32_t capacity = UINT32_MAX;  // bytes the plan may use there
  bool fast = false;               // tightly coupled / single-cycle memory
};

struct PlanOptions {
  bool reuse = true;     // false: every tensor gets its own bytes (calibration observes them all)
  bool in_place = true;  // an op's output may overwrite a dying input when its kernel allows it
  bool exact = true;     // branch and bound when the orderings leave bytes above the lower bound
  // Fastest first (at most format::kMaxRegions); empty: one region without a limit. Activations
  // fill a region up to its capacity and spill the coldest tensors to the next.
  std::vector<MemoryRegion> regions;
  // Constants live in slow memory: copy the weights of the layers with the most MACs per weight
  // byte into the room left in fast regions (Session::bind copies them).
  bool copy_weights = false;
};

// Decides in-place execution, assigns every arena tensor a region and an offset (the best of
// several orderings with first- and best-fit placement, then exact search), picks weights to
// copy into fast RAM, and records the region sizes, the lower bound and `plan_report`.
void plan_memory(LoweredProgram& p, const PlanOptions& options);
inline void plan_memory(LoweredProgram& p, bool reuse = true) {
  PlanOptions options;
  options.reuse = options.in_place = options.exact = reuse;
  plan_memory(p, options);
}

// The largest total of bytes live at one op (16-byte aligned sizes, views counted with their
// root): for each op, the sum of live root tensors minus the bytes an in-place output shares
// with the input it overwrites (read from the planned offsets).
uint32_t liveness_lower_bound(const LoweredProgram& p);

// How many bytes below the start of input `slot` the output of `op` must start so that running
// in place never overwrites an input byte before its last read: 0 for element-wise kernels
// (element i is read before it is written), the read-window lead for raster-order kernels
// (conv, depthwise conv, pooling); -1 when the kernel cannot run in place on that input.
int64_t in_place_shift(const LoweredProgram& p, const ProgramOp& op, size_t slot);

// How many bytes above the start of its input the output may start instead: the reference conv
// and depthwise conv walk their pixels backwards then (kernels/reference/raster_order.h); -1 for
// every other kernel. A chain of in-place ops alternates directions so it does not drift.
int64_t in_place_shift_above(const LoweredProgram& p, const ProgramOp& op, size_t slot);

// A tensor whose bytes the planner puts inside another's, where the op between them moves no
// byte: the output of a strided copy that takes one contiguous block of its input (a slice of
// whole rows; patch bands read their input rows this way), or an input that a cat slice copies
// as one contiguous block of its output (a band's rows of the stage output). Both hold the same
// values there while both live. Only parts written once, read by nothing else than that op
// (cat) and not program inputs or outputs, at 16-byte aligned offsets, and hosts that are not
// parts themselves. p.dropped_copies come last (op -1).
std::vector<Embedding> embeddings(const LoweredProgram& p);

// Before plan_memory: an embedded part's copy (a slice of its input's rows, a cat input into
// its output, without requantization) writes every byte onto itself once the planner has put
// the part inside its host, so it does nothing. drop_self_copies removes those ops and records
// them in p.dropped_copies: the planner still places each part inside its host, a part lives
// while its host does (root_lifetimes), and plan_memory checks the offsets.
void drop_self_copies(LoweredProgram& p);

struct ScheduleOptions {
  size_t max_states = 20000;  // per step of the exact search; above it the greedy order is used
};

// Reorders p.ops into the topological order with the smallest liveness peak (exact dynamic
// programming over the sets of executed ops while they stay few, greedy otherwise); keeps the
// exported order unless another is strictly better. Records `schedule_report`.
void schedule_ops(LoweredProgram& p, const ScheduleOptions& options = {});

// The liveness peak (aligned bytes, without in-place) of running p.ops in `order`.
uint32_t schedule_peak(const LoweredProgram& p, const std::vector<int>& order);

constexpr uint32_t kTensorAlign = 16;
inline uint32_t align_up(uint32_t n, uint32_t a) { return (n + a - 1) / a * a; }

}  // namespace mcuflow::compiler
