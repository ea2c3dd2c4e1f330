// MVE tier (Helium, Armv8.1-M): which ops qualify for which kernel, and what the compiler
// precomputes for them.
#include "mcuflow/compiler/kernel_selection.h"

namespace mcuflow::compiler {

std::vector<TierCandidate> mve_candidates() { return {}; }

}  // namespace mcuflow::compiler
