// Declarations of every kernel adapter; a KernelTable lists the ones a build links.
#pragma once
#include "mcuflow/runtime/runtime.h"

namespace mcuflow::ops {
#define MCUFLOW_DECLARE_ENTRY(name, id) extern const KernelEntry kernel_entry_##name;
#define MCUFLOW_DECLARE_TIER_ENTRY(name, id, reference) extern const KernelEntry kernel_entry_##name;
MCUFLOW_KERNELS(MCUFLOW_DECLARE_ENTRY)
MCUFLOW_TIER_KERNELS(MCUFLOW_DECLARE_TIER_ENTRY)
#undef MCUFLOW_DECLARE_ENTRY
#undef MCUFLOW_DECLARE_TIER_ENTRY
}  // namespace mcuflow::ops
