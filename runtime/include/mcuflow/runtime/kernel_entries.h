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

// A kernel entry without its eval: a tier kernel's load-time check (runtime/src/ops/<tier>/
// checks.h), which builds for host and device. The device pairs it with the tier kernel, the
// host table with the reference kernel (the host cannot run Arm code).
struct KernelCheck {
  uint32_t params_bytes;
  uint8_t input_count;
  uint8_t output_count;
  Error (*check)(const OpCheck&);
  aliasing::Contract access = aliasing::kNoSharing;
  uint8_t scratch_slot = 0;
  constexpr KernelEntry with_eval(void (*eval)(const OpCall&)) const {
    return {params_bytes, input_count, output_count, check, eval, access, scratch_slot};
  }
};
}  // namespace mcuflow::ops
