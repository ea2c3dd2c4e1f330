// Before planning (docs/memory_planning.md, "embedded parts"): the planner puts a band slice
// inside its input and a band output inside the stage output, so their copies would write every
// byte onto itself. Such an op does nothing and is dropped; no other op changes.
#include "mcuflow/compiler/kernel_selection.h"
#include "mcuflow/compiler/planner.h"
#include "mcuflow/kernels/params.h"

namespace mcuflow::compiler {

void drop_self_copies(LoweredProgram& p) {
  std::vector<bool> dropped(p.ops.size(), false);
  for (Embedding e : embeddings(p)) {
    if (e.op < 0) continue;  // dropped before
    const ProgramOp& op = p.ops[size_t(e.op)];
    // A cat slice that requantizes rewrites its bytes: not a copy.
    const bool cat = computes<KernelId::concat_slice_s8>(op.kernel) || computes<KernelId::concat_slice_f32>(op.kernel);
    if (cat && params_of<kernels::ConcatSliceParams>(op).requantize != 0) continue;
    dropped[size_t(e.op)] = true;
    e.op = -1;
    p.dropped_copies.push_back(e);
  }
  std::vector<ProgramOp> kept;
  for (size_t i = 0; i < p.ops.size(); ++i)
    if (!dropped[i]) kept.push_back(std::move(p.ops[i]));
  p.ops = std::move(kept);
}

}  // namespace mcuflow::compiler
