// Ahead-of-time memory planning: every arena tensor gets an offset; views share their root's
// bytes; the arena size and the liveness lower bound are recorded in the program.
#pragma once
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

// Assigns offsets greedily by size (largest first, lowest fitting offset); `reuse == false`
// gives every tensor its own bytes (calibration runs observe every tensor).
void plan_memory(LoweredProgram& p, bool reuse = true);

// The largest total size of root tensors live at one op.
uint32_t liveness_lower_bound(const LoweredProgram& p);

constexpr uint32_t kTensorAlign = 16;
inline uint32_t align_up(uint32_t n, uint32_t a) { return (n + a - 1) / a * a; }

}  // namespace mcuflow::compiler
