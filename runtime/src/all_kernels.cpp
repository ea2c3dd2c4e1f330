// The full kernel table used by host builds. Firmware links a generated table instead, so
// only the kernels a program uses end up in flash.
#include "mcuflow/runtime/kernel_entries.h"

namespace mcuflow {
namespace {
const KernelEntry* const kAllKernels[] = {
    nullptr,  // id 0 is never valid
#define MCUFLOW_ENTRY_POINTER(name, id) &ops::kernel_entry_##name,
    MCUFLOW_KERNELS(MCUFLOW_ENTRY_POINTER)
#undef MCUFLOW_ENTRY_POINTER
};
static_assert(sizeof(kAllKernels) / sizeof(kAllKernels[0]) == size_t(KernelId::kCount), "ids are dense");
}  // namespace

KernelTable all_kernels() { return KernelTable{kAllKernels, uint16_t(KernelId::kCount)}; }

}  // namespace mcuflow
