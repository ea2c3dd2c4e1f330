// DSP tier (Armv7E-M / Armv8-M DSP extension: SMLAD, SXTB16 …): which ops qualify for which
// kernel, and what the compiler precomputes for them.
#include "mcuflow/compiler/kernel_selection.h"

namespace mcuflow::compiler {

std::vector<TierCandidate> dsp_candidates() { return {}; }

}  // namespace mcuflow::compiler
