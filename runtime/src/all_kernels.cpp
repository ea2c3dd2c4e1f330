// The full kernel table used by host builds: every reference kernel, and for each optimized
// (tier) kernel its own load-time check (so the host refuses exactly the programs a device
// refuses) with its reference's eval, which computes the same integers. Firmware links a
// generated table instead, so only the kernels a program uses end up in flash.
#include "mcuflow/runtime/kernel_entries.h"
#include "ops/dsp/checks.h"
#include "ops/mve/checks.h"
#include "ops/scalar/checks.h"

namespace mcuflow {
namespace {

// A tier op's eval on the host: its reference kernel's, reached through the reference's entry.
template <const KernelEntry& kReference>
void reference_eval(const OpCall& call) {
  kReference.eval(call);
}

#define MCUFLOW_HOST_TIER_ENTRY(name, id, reference) \
  constexpr KernelEntry kHostEntry_##name =           \
      ops::kernel_check_##name.with_eval(reference_eval<ops::kernel_entry_##reference>);
MCUFLOW_TIER_KERNELS(MCUFLOW_HOST_TIER_ENTRY)
#undef MCUFLOW_HOST_TIER_ENTRY

struct HostTable {
  const KernelEntry* entries[kKernelIdCount];
};

constexpr HostTable make_host_table() {
  HostTable t{};
#define MCUFLOW_REFERENCE_SLOT(name, id) t.entries[id] = &ops::kernel_entry_##name;
#define MCUFLOW_TIER_SLOT(name, id, reference) t.entries[id] = &kHostEntry_##name;
  MCUFLOW_KERNELS(MCUFLOW_REFERENCE_SLOT)
  MCUFLOW_TIER_KERNELS(MCUFLOW_TIER_SLOT)
#undef MCUFLOW_REFERENCE_SLOT
#undef MCUFLOW_TIER_SLOT
  return t;
}

constexpr HostTable kHostTable = make_host_table();

}  // namespace

KernelTable all_kernels() { return KernelTable{kHostTable.entries, kKernelIdCount}; }

}  // namespace mcuflow
