// The full kernel table used by host builds: every reference kernel, and for each optimized
// (tier) kernel its reference, which computes the same integers. Firmware links a generated
// table instead, so only the kernels a program uses end up in flash.
#include "mcuflow/runtime/kernel_entries.h"

namespace mcuflow {
namespace {

struct HostTable {
  const KernelEntry* entries[size_t(KernelId::kCount)];
};

constexpr HostTable make_host_table() {
  HostTable t{};
#define MCUFLOW_REFERENCE_SLOT(name, id) t.entries[id] = &ops::kernel_entry_##name;
#define MCUFLOW_TIER_SLOT(name, id, reference) t.entries[id] = &ops::kernel_entry_##reference;
  MCUFLOW_KERNELS(MCUFLOW_REFERENCE_SLOT)
  MCUFLOW_TIER_KERNELS(MCUFLOW_TIER_SLOT)
#undef MCUFLOW_REFERENCE_SLOT
#undef MCUFLOW_TIER_SLOT
  return t;
}

constexpr HostTable kHostTable = make_host_table();

}  // namespace

KernelTable all_kernels() { return KernelTable{kHostTable.entries, uint16_t(KernelId::kCount)}; }

}  // namespace mcuflow
